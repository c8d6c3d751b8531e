#include <fmt/format.h>

#include "report/finding_groups.hpp"
#include "report/render.hpp"

namespace ccdiag {

namespace {
// Table cells: pipes and newlines would break the row.
std::string cell(std::string s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += "\\|";
    else if (c == '\n') o += ' ';
    else o += c;
  }
  return o;
}
}  // namespace

void render_markdown(const Report& r, std::ostream& out) {
  const auto& v = r.verdict;
  out << "### ccdiag: `" << v.root_cause << "`";
  if (v.layer) out << " (" << to_string(*v.layer) << ")";
  out << fmt::format(" — confidence {:.2f}{}\n\n", v.confidence,
                     v.basis == "leading_candidate" ? " (leading candidate, weak evidence)" : "");
  if (!v.culprit.empty()) out << "**Culprit:** " << v.culprit.describe() << "\n\n";
  out << v.summary << "\n\n";
  if (!r.next_steps.empty()) {
    out << "**Next steps**\n\n";
    int i = 1;
    for (const auto& n : r.next_steps) {
      out << i++ << ". " << n.action;
      if (!n.command.empty()) out << ": `" << n.command << "`";
      out << '\n';
    }
    out << '\n';
  }
  if (!r.chain.empty()) {
    out << "| layer | outcome | note |\n|---|---|---|\n";
    for (const auto& s : r.chain)
      out << "| " << to_string(s.layer) << " | " << to_string(s.outcome) << " | " << cell(s.note) << " |\n";
    out << '\n';
  }
  if (!r.findings.empty()) {
    const auto groups = group_findings(r.findings);
    out << "<details><summary>Findings (" << r.findings.size();
    if (groups.size() < r.findings.size()) out << " in " << groups.size() << " groups";
    out << ")</summary>\n\n";
    size_t n = 0;
    for (const auto& g : groups) {
      if (++n > 50) {
        out << "- … " << (groups.size() - 50) << " more groups in the JSON report\n";
        break;
      }
      const Finding& f = r.findings[g.first];
      out << "- **" << to_string(f.severity) << "** " << cell(f.summary);
      if (f.role != FindingRole::primary) out << " _(" << to_string(f.role) << ")_";
      if (g.members.size() > 1) out << " — " << g.members.size() << "× " << cell(describe_group(g));
      if (!f.provenance.empty()) {
        out << " — `" << f.provenance.front().source;
        if (f.provenance.front().line) out << ":" << *f.provenance.front().line;
        out << "`";
      }
      out << '\n';
    }
    out << "\n</details>\n\n";
  }
  if (!r.alternatives.empty()) {
    out << "**Alternatives:** ";
    bool first = true;
    for (const auto& a : r.alternatives) {
      out << (first ? "" : ", ") << fmt::format("`{}` ({:.2f})", a.root_cause, a.score);
      first = false;
    }
    out << "\n\n";
  }
  if (!r.unchecked.empty()) {
    out << "**Not checked:**\n\n";
    for (const auto& u : r.unchecked) out << "- " << u.what << ": " << to_string(u.state) << ": " << u.reason << '\n';
    out << '\n';
  }
  out << "_ccdiag " << r.ccdiag_version << ", schema " << r.schema_version << "_\n";
}

}  // namespace ccdiag
