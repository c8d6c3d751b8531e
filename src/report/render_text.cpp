#include <unistd.h>

#include <cstdlib>
#include <iomanip>

#include <fmt/format.h>

#include "report/finding_groups.hpp"
#include "report/render.hpp"

namespace ccdiag {

bool want_color(int fd) {
  const char* nc = std::getenv("NO_COLOR");
  if (nc && *nc) return false;
  return ::isatty(fd) == 1;
}

namespace {

struct Paint {
  bool on;
  std::string operator()(const std::string& s, const char* code) const {
    return on ? std::string("\033[") + code + "m" + s + "\033[0m" : s;
  }
};

const char* severity_color(Severity s) {
  switch (s) {
    case Severity::critical: return "1;31";
    case Severity::error: return "31";
    case Severity::warning: return "33";
    default: return "2";
  }
}

std::string where(const Finding& f) {
  if (f.provenance.empty()) return "";
  const auto& p = f.provenance.front();
  return p.line ? fmt::format("{}:{}", p.source, *p.line) : p.source;
}

}  // namespace

void render_text(const Report& r, std::ostream& out, const TextStyle& style) {
  Paint paint{style.color};
  const auto& v = r.verdict;
  const bool problem = v.root_cause != kNoProblemFound;
  std::string head = v.root_cause;
  if (v.layer) head += fmt::format(" ({})", to_string(*v.layer));
  out << paint("verdict:", "1") << ' ' << paint(head, problem ? "1;31" : "1;32")
      << fmt::format("  confidence {:.2f}", v.confidence)
      << (v.basis == "leading_candidate" ? "  (leading candidate, weak evidence)" : "") << '\n';
  if (!v.culprit.empty()) out << paint("culprit:", "1") << ' ' << v.culprit.describe() << '\n';
  if (!r.next_steps.empty()) {
    out << paint("next:", "1") << ' ' << r.next_steps.front().action;
    if (!r.next_steps.front().command.empty()) out << "\n      $ " << r.next_steps.front().command;
    out << '\n';
  }
  out << '\n' << v.summary << '\n';

  if (!r.chain.empty()) {
    out << '\n' << paint("Layers walked:", "1") << '\n';
    for (const auto& s : r.chain)
      out << fmt::format("  {:<14} {:<11} {}\n", to_string(s.layer), to_string(s.outcome), s.note);
  }
  if (!r.findings.empty()) {
    // Identical findings of many ranks are one line each (report/finding_groups);
    // --verbose lists every finding.
    const auto groups = group_findings(r.findings);
    if (style.verbose || groups.size() == r.findings.size())
      out << '\n' << paint(fmt::format("Findings ({}):", r.findings.size()), "1") << '\n';
    else
      out << '\n' << paint(fmt::format("Findings ({} in {} groups):", r.findings.size(), groups.size()), "1") << '\n';
    auto line = [&](const Finding& f, const std::string& members, size_t others) {
      std::string role = f.role == FindingRole::primary ? "" : fmt::format(" [{}]", to_string(f.role));
      out << "  " << paint(fmt::format("{:<8}", to_string(f.severity)), severity_color(f.severity)) << ' '
          << f.summary << role;
      if (!members.empty()) out << paint("  x" + members, "1");
      std::string w = where(f);
      if (!w.empty() && others) w += fmt::format(", +{} more", others);
      if (!w.empty()) out << paint("  (" + w + ")", "2");
      out << '\n';
    };
    size_t shown = 0;
    if (style.verbose) {
      for (const auto& f : r.findings) line(f, "", 0);
    } else {
      for (const auto& g : groups) {
        if (shown == 20) {
          out << fmt::format("  ... {} more group(s) (use --json or --verbose)\n", groups.size() - shown);
          break;
        }
        ++shown;
        const std::string who = g.members.size() > 1 ? fmt::format("{}: {}", g.members.size(), describe_group(g)) : "";
        line(r.findings[g.first], who, g.members.size() - 1);
      }
    }
  }
  if (!r.alternatives.empty()) {
    out << '\n' << paint("Alternatives:", "1") << '\n';
    for (const auto& a : r.alternatives)
      out << fmt::format("  {:<32} {:.2f}  {}\n", a.root_cause, a.score, a.why);
  }
  if (r.next_steps.size() > 1) {
    out << '\n' << paint("Next steps:", "1") << '\n';
    int i = 1;
    for (const auto& n : r.next_steps) {
      out << fmt::format("  {}. {}\n", i++, n.action);
      if (!n.command.empty()) out << "     $ " << n.command << '\n';
    }
  }
  if (!r.unchecked.empty()) {
    out << '\n' << paint("Not checked:", "1") << '\n';
    for (const auto& u : r.unchecked) out << "  - " << u.what << ": " << to_string(u.state) << ": " << u.reason << '\n';
  }
  if (r.explain) render_explain_text(*r.explain, out, style);
}

void render_explain_text(const Explain& e, std::ostream& out, const TextStyle& style) {
  Paint paint{style.color};
  out << '\n' << paint("Explain: rule hypotheses", "1") << " (" << e.hypotheses.size() << ")\n";
  for (const auto& h : e.hypotheses) {
    const std::string culprit = h.culprit.empty() ? "-" : h.culprit.describe();
    out << fmt::format("  {:<22} {:<32} x{:<8g} key={}  culprit=[{}]{}{}\n", h.rule, h.cause, h.ratio, h.evidence_key,
                       culprit, h.known_cause ? (h.counted ? "" : "  (weaker, same key)") : "  (NOT IN CATALOGUE, dropped)",
                       h.why.empty() ? "" : "\n      why: " + h.why);
  }
  out << '\n' << paint("Explain: odds per cause", "1")
      << fmt::format(" (confidence = odds / {:.4g} x {:.3g} for {} unchecked probe(s), capped at 0.98)\n", e.total_odds,
                     e.unchecked_factor, e.unchecked);
  for (const auto& c : e.causes) {
    std::string line = fmt::format("  {:<32} prior {:g} -> odds {:.4g}", c.cause, c.prior, c.prior_odds);
    for (const auto& f : c.factors) line += fmt::format(" x {:g} [{}]", f.ratio, f.evidence_key);
    line += fmt::format(" = {:.4g}", c.odds);
    line += c.candidate ? fmt::format(" -> confidence {:.3f}", c.confidence) : std::string(" (counter-evidence only: not a candidate)");
    out << line << '\n';
  }
  if (!e.unknown_causes.empty()) {
    out << "  cause ids not in the catalogue (dropped):";
    for (const auto& u : e.unknown_causes) out << ' ' << u;
    out << '\n';
  }
}

}  // namespace ccdiag
