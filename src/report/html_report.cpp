#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "report/html.hpp"
#include "report/render_fleet.hpp"

namespace ccdiag {

std::string html_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size() + 16);
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o.push_back(c);
    }
  }
  return o;
}

std::string json_for_script(const std::string& j) {
  // In JSON text '<', '>' and '&' only occur inside strings, where \u escapes
  // mean the same; escaping all of them keeps "</script>", "<!--" and
  // "<script" (which would switch the HTML parser's script-data states) out.
  std::string o;
  o.reserve(j.size());
  for (char c : j) {
    if (c == '<') o += "\\u003c";
    else if (c == '>') o += "\\u003e";
    else if (c == '&') o += "\\u0026";
    else o.push_back(c);
  }
  return o;
}

namespace {

using E = std::string;
E esc(std::string_view s) { return html_escape(s); }

const char* kStyle = R"CSS(
body{font-family:sans-serif;margin:1.5em;color:#1b1b1b;background:#fff;max-width:1400px}
h1{font-size:1.4em;margin:0 0 .3em} h2{font-size:1.15em;margin:1.6em 0 .5em;border-bottom:1px solid #ccc}
.verdict{border:2px solid #b00020;border-radius:6px;padding:.8em 1em;background:#fff5f5}
.verdict.ok{border-color:#1b7f3b;background:#f3fbf5}
.verdict .cause{font-size:1.3em;font-weight:bold} .culprit{font-size:1.1em;margin:.4em 0}
.culprit b{background:#ffe08a;padding:0 .3em}
table{border-collapse:collapse;font-size:.88em;margin:.4em 0} th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left}
th{background:#f0f0f0} tr.flag td{background:#fff3e0} td.num{text-align:right}
code{font-family:monospace;font-size:.95em} .muted{color:#666} .odd{font-weight:bold;color:#b00020}
.legend span{display:inline-block;margin-right:1.2em} svg{border:1px solid #ddd;background:#fafafa}
)CSS";

std::string culprit_html(const Subject& c) {
  std::vector<std::pair<const char*, std::string>> parts;
  if (c.host) parts.push_back({"host", *c.host});
  if (c.rank) parts.push_back({"rank", std::to_string(*c.rank)});
  if (c.pid) parts.push_back({"pid", std::to_string(*c.pid)});
  if (c.gpu) parts.push_back({"gpu", *c.gpu});
  if (c.nic) parts.push_back({"nic", *c.nic});
  if (c.port) parts.push_back({"port", std::to_string(*c.port)});
  if (c.process_group) parts.push_back({"process group", *c.process_group});
  if (c.seq) parts.push_back({"seq", std::to_string(*c.seq)});
  std::string s;
  for (const auto& [k, v] : parts) s += fmt::format("{} <b>{}</b> ", k, esc(v));
  return s.empty() ? "<span class=\"muted\">not determined</span>" : s;
}

}  // namespace

void html_verdict_section(const Report& r, std::ostream& out) {
  const auto& v = r.verdict;
  const bool ok = v.root_cause == kNoProblemFound;
  out << "<section id=\"verdict\" class=\"verdict" << (ok ? " ok" : "") << "\">\n";
  out << "<div class=\"cause\">Verdict: <span id=\"root-cause\">" << esc(v.root_cause) << "</span>"
      << (v.layer ? " (" + esc(to_string(*v.layer)) + ")" : "") << fmt::format(" — confidence {:.2f}", v.confidence)
      << "</div>\n";
  out << "<div class=\"culprit\" id=\"culprit\">Culprit: " << culprit_html(v.culprit) << "</div>\n";
  out << "<p>" << esc(v.summary) << "</p>\n";
  if (!r.next_steps.empty()) {
    out << "<ol>\n";
    for (const auto& n : r.next_steps) {
      out << "<li>" << esc(n.action);
      if (!n.command.empty()) out << "<br><code>" << esc(n.command) << "</code>";
      out << "</li>\n";
    }
    out << "</ol>\n";
  }
  out << "</section>\n";
  if (!r.alternatives.empty()) {
    out << "<h2>Alternatives</h2>\n<table><tr><th>root cause</th><th>score</th><th>why</th></tr>\n";
    for (const auto& a : r.alternatives)
      out << fmt::format("<tr><td>{}</td><td class=\"num\">{:.3f}</td><td>{}</td></tr>\n", esc(a.root_cause), a.score, esc(a.why));
    out << "</table>\n";
  }
  if (!r.chain.empty()) {
    out << "<h2>Layers walked</h2>\n<table><tr><th>layer</th><th>outcome</th><th>note</th></tr>\n";
    for (const auto& c : r.chain)
      out << fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", esc(to_string(c.layer)), esc(to_string(c.outcome)), esc(c.note));
    out << "</table>\n";
  }
}

namespace {

// One strip per process group: every rank (or a bin of ranks when there are
// more than kBins), coloured and shaped by state; the height of a "behind"
// bar grows with how far behind it is, so colour is never the only cue.
void sequence_section(const FleetSummary& s, std::ostream& out) {
  if (s.sequences.empty()) return;
  out << "<h2 id=\"sequence\">Rank × collective sequence</h2>\n";
  out << "<p class=\"legend\"><span>■ green: at the front</span><span>▲ orange bar: behind (taller = further)</span>"
         "<span>✕ red: never joined (its peers' evidence says it never arrived)</span>"
         "<span>▒ grey hatched: no data (no host reported this rank; nothing is known)</span></p>\n";
  constexpr int kBins = 512, kWidth = 1024, kHeight = 60;
  for (const auto& sp : s.sequences) {
    const std::string pg = sp.process_group.empty() ? "default" : sp.process_group;
    out << fmt::format("<h3>Process group {} — {} ranks, front at seq {}: {} at the front, {} behind, {} never joined, "
                       "{} with no data</h3>\n",
                       esc(pg), sp.group_size, sp.front, sp.at_front, sp.behind, sp.never_joined, sp.missing);
    const int n = static_cast<int>(sp.rows.size());
    if (n == 0) continue;
    const int bins = std::min(n, kBins);
    const double bw = static_cast<double>(kWidth) / bins;
    int64_t max_lag = 1;
    for (const auto& r : sp.rows) max_lag = std::max(max_lag, r.behind_by);
    out << fmt::format("<svg class=\"seq\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"rank by sequence for group {}\">\n",
                       kWidth, kHeight + 16, kWidth, kHeight + 16, esc(pg));
    for (int b = 0; b < bins; ++b) {
      const int lo = static_cast<int>(static_cast<int64_t>(b) * n / bins);
      const int hi = static_cast<int>(static_cast<int64_t>(b + 1) * n / bins);
      // The worst rank of the bin decides its look: never joined > no data >
      // behind (the furthest) > front.
      auto weight = [](const RankRow& r) {
        return r.state == RankState::never_joined ? 3 : r.state == RankState::missing ? 2 : r.state == RankState::behind ? 1 : 0;
      };
      const RankRow* worst = &sp.rows[lo];
      for (int i = lo; i < hi; ++i) {
        const auto& r = sp.rows[i];
        if (weight(r) > weight(*worst) || (weight(r) == weight(*worst) && r.behind_by > worst->behind_by)) worst = &r;
      }
      const double x = b * bw;
      std::string title = hi - lo > 1 ? fmt::format("ranks {}-{}: ", sp.rows[lo].rank, sp.rows[hi - 1].rank)
                                      : fmt::format("rank {}: ", worst->rank);
      const bool absent = worst->state == RankState::missing || worst->state == RankState::never_joined;
      if (worst->state == RankState::missing)
        title += fmt::format("rank {}: no data (no host reported it)", worst->rank);
      else if (worst->state == RankState::never_joined)
        title += fmt::format("rank {} never joined: {}", worst->rank, worst->absence);
      else
        title += fmt::format("rank {} {} on {}", worst->rank, to_string(worst->state), dash_or(worst->host));
      if (!absent)
        title += fmt::format(", started {} completed {}", dash_or(worst->last_started), dash_or(worst->last_completed));
      const double w = std::max(bw - (bw > 3 ? 1 : 0), 1.0);
      if (worst->state == RankState::missing) {
        // Hatched grey, lighter than any state with evidence: absence of data,
        // not evidence of absence.
        out << fmt::format("<g class=\"no-data\" data-rank=\"{}\"><title>{}</title><rect x=\"{:.1f}\" y=\"0\" width=\"{:.1f}\" height=\"{}\" fill=\"#bdbdbd\"/>"
                           "<path d=\"M{:.1f} {} L{:.1f} {}\" stroke=\"#fff\" stroke-width=\"1\" stroke-dasharray=\"3 3\"/></g>\n",
                           worst->rank, esc(title), x, w, kHeight, x, kHeight, x + w, 0);
      } else if (worst->state == RankState::never_joined) {
        out << fmt::format("<g class=\"never-joined\" data-rank=\"{}\"><title>{}</title><rect x=\"{:.1f}\" y=\"0\" width=\"{:.1f}\" height=\"{}\" fill=\"#d32f2f\"/>"
                           "<path d=\"M{:.1f} 0 L{:.1f} {} M{:.1f} 0 L{:.1f} {}\" stroke=\"#fff\" stroke-width=\"1\"/></g>\n",
                           worst->rank, esc(title), x, w, kHeight, x, x + w, kHeight, x + w, x, kHeight);
      } else if (worst->state == RankState::behind) {
        const double h = 12 + (kHeight - 12) * static_cast<double>(worst->behind_by) / static_cast<double>(max_lag);
        out << fmt::format("<g class=\"behind\" data-rank=\"{}\"><title>{}</title><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#f57c00\"/></g>\n",
                           worst->rank, esc(title), x, kHeight - h, w, h);
      } else {
        out << fmt::format("<g class=\"front\"><title>{}</title><rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"8\" fill=\"#2e7d32\"/></g>\n",
                           esc(title), x, kHeight - 8, w);
      }
    }
    out << fmt::format("<text x=\"0\" y=\"{}\" font-size=\"11\">rank {}</text><text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">rank {}</text>\n",
                       kHeight + 13, sp.rows.front().rank, kWidth, kHeight + 13, sp.rows.back().rank);
    out << "</svg>\n";
    size_t listed = 0;
    std::ostringstream rows;
    for (const auto& r : sp.rows) {
      if (r.state == RankState::front) continue;
      if (listed++ == 500) break;
      rows << fmt::format("<tr class=\"flag\"><td class=\"num\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>\n",
                          r.rank, esc(dash_or(r.host)), esc(r.absence.empty() ? std::string(to_string(r.state)) : std::string(to_string(r.state)) + ": " + r.absence), esc(dash_or(r.last_started)),
                          esc(dash_or(r.last_completed)), r.behind_by, esc(dash_or(r.op)), esc(dash_or(r.fr_state)));
    }
    if (listed) {
      out << "<table class=\"laggards\"><tr><th>rank</th><th>host</th><th>state</th><th>last started</th><th>last completed</th><th>behind by</th><th>op</th><th>state (FR)</th></tr>\n"
          << rows.str() << "</table>\n";
    }
  }
}

void census_section(const FleetSummary& s, std::ostream& out) {
  if (s.census.empty()) return;
  out << "<h2 id=\"census\">Stack census (main thread of each rank)</h2>\n";
  out << "<table><tr><th>ranks</th><th>signature (innermost first)</th><th>which ranks</th><th>hosts</th></tr>\n";
  size_t n = 0;
  for (const auto& g : s.census) {
    if (n++ == 50) break;
    std::string ranks;
    for (size_t i = 0; i < g.ranks.size() && i < 32; ++i) ranks += (i ? "," : "") + std::to_string(g.ranks[i]);
    if (g.ranks.size() > 32) ranks += fmt::format(" (+{} more)", g.ranks.size() - 32);
    std::string hosts;
    for (size_t i = 0; i < g.hosts.size() && i < 8; ++i) hosts += (i ? ", " : "") + g.hosts[i];
    if (g.hosts.size() > 8) hosts += fmt::format(" (+{} more)", g.hosts.size() - 8);
    out << fmt::format("<tr{}><td class=\"num\">{}{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>\n",
                       g.odd ? " class=\"flag\"" : "", g.ranks.size(), g.odd ? " <span class=\"odd\">odd one out</span>" : "",
                       esc(g.signature), esc(ranks), esc(hosts));
  }
  out << "</table>\n";
}

bool flagged(const HostSummary& h) {
  return h.status != HostStatus::ok || h.problems > 0 || !h.hw.xids.empty() || h.hw.fell_off_bus ||
         (h.hw.pcie_downtrained && *h.hw.pcie_downtrained > 0) || !h.hw.throttled_gpus.empty() ||
         (h.hw.nvlink_errors && *h.hw.nvlink_errors > 0) || (h.hw.ib_error_increase && *h.hw.ib_error_increase > 0) ||
         (h.hw.nic_ports && h.hw.nic_ports_active && *h.hw.nic_ports_active < *h.hw.nic_ports);
}

void host_row(const HostSummary& h, std::ostream& out) {
  if (h.status != HostStatus::ok) {
    out << fmt::format("<tr class=\"flag\"><td>{}</td><td colspan=\"11\">{}: {}</td></tr>\n", esc(h.host),
                       esc(to_string(h.status)), esc(h.error));
    return;
  }
  const std::string nv = h.hw.nvlink_active ? fmt::format("{}/{}", *h.hw.nvlink_active, dash_or(h.hw.nvlink_total)) : "—";
  const std::string nic = h.hw.nic_ports ? fmt::format("{}/{}", dash_or(h.hw.nic_ports_active), *h.hw.nic_ports) : "—";
  std::string thr;
  for (const auto& t : h.hw.throttled_gpus) thr += (thr.empty() ? "" : "; ") + t;
  out << fmt::format("<tr{}><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
                     "<td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                     flagged(h) ? " class=\"flag\"" : "", esc(h.host), esc(dash_or(h.hw.gpus)), esc(dash_or(h.hw.gpu_model)), esc(nv),
                     esc(nic), esc(dash_or(h.hw.ib_error_increase)), esc(dash_or(h.hw.nvlink_errors)),
                     esc(dash_or(h.hw.pcie_downtrained)), esc(dash_or(thr)), esc(xid_text(h.hw)), esc(dash_or(h.nccl_version)),
                     esc(dash_or(h.worst_finding)));
}

void hosts_section(const FleetSummary& s, std::ostream& out) {
  if (!s.not_answered.empty()) {
    out << fmt::format("<h2 id=\"not-answered\">Hosts that did not answer ({})</h2>\n", s.not_answered.size());
    out << "<table><tr><th>host</th><th>status</th><th>reason</th></tr>\n";
    for (const auto* h : s.not_answered)
      out << fmt::format("<tr class=\"flag\"><td>{}</td><td>{}</td><td>{}</td></tr>\n", esc(h->host), esc(to_string(h->status)), esc(h->error));
    out << "</table>\n";
  }
  if (!s.differences.empty()) {
    out << "<h2 id=\"differences\">Hosts that differ from the majority</h2>\n";
    out << "<table><tr><th>attribute</th><th>value</th><th>hosts</th><th>majority value</th></tr>\n";
    for (const auto& d : s.differences)
      for (const auto& o : d.others) {
        std::string hosts;
        for (size_t i = 0; i < o.hosts.size() && i < 64; ++i) hosts += (i ? ", " : "") + o.hosts[i];
        if (o.hosts.size() > 64) hosts += fmt::format(" (+{} more)", o.hosts.size() - 64);
        out << fmt::format("<tr class=\"flag\"><td>{}</td><td>{}</td><td>{}</td><td>{} ({} hosts)</td></tr>\n", esc(d.attribute),
                           esc(o.value), esc(hosts), esc(d.majority), d.majority_hosts);
      }
    out << "</table>\n";
  }
  if (!s.hosts) return;
  const char* head =
      "<tr><th>host</th><th>GPUs</th><th>model</th><th>NVLink up/total</th><th>NIC ports up/total</th><th>IB error Δ</th>"
      "<th>NVLink errors</th><th>PCIe downtrained</th><th>throttled</th><th>Xid</th><th>NCCL</th><th>worst finding</th></tr>\n";
  size_t nflag = 0;
  for (const auto& h : *s.hosts) nflag += flagged(h) ? 1 : 0;
  out << fmt::format("<h2 id=\"hardware\">Per-host hardware ({} host(s), {} flagged)</h2>\n", s.hosts->size(), nflag);
  out << "<table class=\"hosts\">" << head;
  for (const auto& h : *s.hosts)
    if (flagged(h)) host_row(h, out);
  out << "</table>\n";
  if (nflag < s.hosts->size()) {
    out << fmt::format("<details><summary>{} host(s) with nothing flagged</summary>\n<table class=\"hosts\">", s.hosts->size() - nflag) << head;
    for (const auto& h : *s.hosts)
      if (!flagged(h)) host_row(h, out);
    out << "</table></details>\n";
  }
}

void findings_section(const Report& r, std::ostream& out) {
  if (r.findings.empty()) return;
  out << fmt::format("<h2 id=\"findings\">Findings ({})</h2>\n<table><tr><th>severity</th><th>role</th><th>summary</th><th>subject</th><th>source</th></tr>\n",
                     r.findings.size());
  for (const auto& f : r.findings) {
    std::string src;
    if (!f.provenance.empty())
      src = f.provenance.front().source + (f.provenance.front().line ? ":" + std::to_string(*f.provenance.front().line) : "");
    out << fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>\n", esc(to_string(f.severity)),
                       esc(to_string(f.role)), esc(f.summary), esc(f.subject.describe()), esc(src));
  }
  out << "</table>\n";
}

}  // namespace

void html_head(std::string_view title, std::ostream& out) {
  // The CSP comes first in <head>, before anything that could fetch.
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n"
      << "<meta charset=\"utf-8\">\n"
      << "<title>" << esc(title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
}

void html_unchecked_section(const Report& r, std::ostream& out) {
  if (r.unchecked.empty()) return;
  out << fmt::format("<details><summary>Could not be checked ({})</summary><ul>\n", r.unchecked.size());
  size_t n = 0;
  for (const auto& u : r.unchecked) {
    if (n++ == 500) break;
    out << "<li>" << esc(u.what) << ": " << to_string(u.state) << ": " << esc(u.reason) << "</li>\n";
  }
  out << "</ul></details>\n";
}

void render_html(const Report& r, const FleetSummary& s, std::ostream& out) {
  html_head("ccdiag analyze: " + r.verdict.root_cause, out);
  out << "<h1>ccdiag analyze — " << s.hosts_answered << " of " << s.hosts_total << " host(s) answered</h1>\n";
  out << "<p class=\"muted\">ccdiag " << esc(r.ccdiag_version) << "</p>\n";
  html_verdict_section(r, out);
  sequence_section(s, out);
  census_section(s, out);
  hosts_section(s, out);
  findings_section(r, out);
  html_unchecked_section(r, out);
  nlohmann::json data = r;
  data["fleet"] = fleet_to_json(s);
  out << "<script type=\"application/json\" id=\"ccdiag-data\">" << json_for_script(data.dump()) << "</script>\n";
  out << "</body>\n</html>\n";
}

}  // namespace ccdiag
