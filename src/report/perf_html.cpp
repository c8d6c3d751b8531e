// `ccdiag perf --html`: one page, the conventions of report/html.hpp (CSP
// first, no script, every value escaped). Each run's chart is drawn from the
// values the JSON reports, so what the page shows and what --json says agree.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/html.hpp"
#include "report/perf_render.hpp"

namespace ccdiag {

namespace {

using perf::RunSummary;

std::string esc(std::string_view s) { return html_escape(s); }

std::string human_size(int64_t b) {
  if (b >= (1LL << 30) && b % (1LL << 30) == 0) return fmt::format("{}G", b >> 30);
  if (b >= (1LL << 20) && b % (1LL << 20) == 0) return fmt::format("{}M", b >> 20);
  if (b >= (1LL << 10) && b % (1LL << 10) == 0) return fmt::format("{}K", b >> 10);
  return std::to_string(b);
}

// 1, 2 or 5 times a power of ten, at least x: tick steps a reader can add up.
double nice_step(double x) {
  const double p = std::pow(10.0, std::floor(std::log10(x)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= x) return m * p;
  return 10 * p;
}

// Plot area inside the SVG; the y axis starts at 0 so heights compare honestly.
constexpr double kW = 720, kH = 320, kLeft = 64, kRight = 700, kTop = 20, kBottom = 276;

struct Axes {
  double lmin = 0, lmax = 1;  // log2 of the smallest and largest size
  double ymax = 1, ystep = 1;
  double x(int64_t size) const {
    if (lmax <= lmin) return (kLeft + kRight) / 2;
    return kLeft + (std::log2(static_cast<double>(size)) - lmin) / (lmax - lmin) * (kRight - kLeft);
  }
  double y(double v) const { return kBottom - v / ymax * (kBottom - kTop); }
};

Axes axes_for(const RunSummary& s, const std::vector<perf::BandwidthPoint>& pts) {
  Axes a;
  a.lmin = std::log2(static_cast<double>(pts.front().size_bytes));
  a.lmax = std::log2(static_cast<double>(pts.back().size_bytes));
  double top = 0;
  for (const auto& p : pts) top = std::max(top, p.value);
  for (const auto& v : {s.expected, s.expected_present, s.plateau, s.baseline_median})
    if (v && std::isfinite(*v)) top = std::max(top, *v);
  if (!(top > 0)) top = 1;
  a.ystep = nice_step(top * 1.05 / 5);
  a.ymax = std::ceil(top * 1.05 / a.ystep) * a.ystep;
  return a;
}

void hline(std::ostream& out, const Axes& a, const char* cls, double v, double x1, double x2, const char* style, const std::string& title) {
  if (!std::isfinite(v)) return;
  out << fmt::format("<line class=\"{}\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.2f}\" y2=\"{:.2f}\" data-value=\"{}\" {}><title>{}</title></line>\n", cls, x1, x2,
                     a.y(v), a.y(v), v, style, esc(title));
}

void chart(const RunSummary& s, std::ostream& out) {
  // Sizes <= 0 have no place on a log axis (nccl-tests -b 0), nor "nan" values (-J JSON) on any axis.
  std::vector<perf::BandwidthPoint> pts;
  for (const auto& p : s.points)
    if (p.size_bytes > 0 && std::isfinite(p.value)) pts.push_back(p);
  if (pts.empty()) {
    out << "<p class=\"muted\">No bandwidth per size in this run (a latency test, or no rows): nothing to chart.</p>\n";
    return;
  }
  const Axes a = axes_for(s, pts);
  const std::string what = s.tool == "perftest" ? "BW average" : "busbw";
  out << fmt::format("<svg class=\"busbw\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{} vs message size: {}\" "
                     "data-y-max=\"{}\" data-plot-top=\"{}\" data-plot-bottom=\"{}\">\n",
                     kW, kH, kW, kH, what, esc(s.file), a.ymax, kTop, kBottom);
  // Grid and y ticks.
  for (double v = 0; v <= a.ymax + a.ystep / 2; v += a.ystep)
    out << fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"#e3e3e3\"/><text x=\"{}\" y=\"{:.2f}\" font-size=\"11\" "
                       "text-anchor=\"end\">{:g}</text>\n",
                       kLeft, kRight, a.y(v), a.y(v), kLeft - 6, a.y(v) + 4, v);
  // x ticks at powers of two, at most about 12 labels.
  const int e0 = static_cast<int>(std::ceil(a.lmin)), e1 = static_cast<int>(std::floor(a.lmax));
  const int every = std::max(1, (e1 - e0 + 11) / 12);
  for (int e = e0; e <= e1 && e < 63; e += every) {
    const double x = a.x(int64_t{1} << e);
    out << fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" stroke=\"#999\"/><text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" "
                       "text-anchor=\"middle\">{}</text>\n",
                       x, x, kBottom, kBottom + 5, x, kBottom + 18, human_size(int64_t{1} << e));
  }
  out << fmt::format("<line class=\"axis\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#333\"/>"
                     "<line class=\"axis\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n",
                     kLeft, kRight, kBottom, kBottom, kLeft, kLeft, kTop, kBottom);
  out << fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">message size (bytes, log2 scale)</text>"
                     "<text x=\"14\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 {})\">{} ({})</text>\n",
                     (kLeft + kRight) / 2, kH - 8, (kTop + kBottom) / 2, (kTop + kBottom) / 2, what, esc(s.unit));
  if (s.expected)
    hline(out, a, "expected", *s.expected, kLeft, kRight, "stroke=\"#2e7d32\" stroke-width=\"2\" stroke-dasharray=\"8 4\"",
          fmt::format("expected plateau {:.2f} {} = {}", *s.expected, s.unit, s.expected_formula));
  if (s.expected && s.expected_present && *s.expected_present + 1e-6 < *s.expected)
    hline(out, a, "expected-present", *s.expected_present, kLeft, kRight, "stroke=\"#f57c00\" stroke-width=\"2\" stroke-dasharray=\"3 3\"",
          fmt::format("what the parts allow as trained now: {:.2f} {}", *s.expected_present, s.unit));
  if (s.baseline_median)
    hline(out, a, "baseline", *s.baseline_median, kLeft, kRight, "stroke=\"#6a1b9a\" stroke-width=\"1.5\" stroke-dasharray=\"2 4\"",
          fmt::format("baseline median {:.2f} {}", *s.baseline_median, s.unit));
  std::string line;
  for (const auto& p : pts) line += fmt::format("{}{:.1f},{:.2f}", line.empty() ? "" : " ", a.x(p.size_bytes), a.y(p.value));
  out << "<polyline class=\"series\" fill=\"none\" stroke=\"#1565c0\" stroke-width=\"1.5\" points=\"" << line << "\"/>\n";
  for (const auto& p : pts)
    out << fmt::format("<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.2f}\" r=\"3.5\" fill=\"#1565c0\"><title>{} ({} bytes): {} {:.2f} {}</title></circle>\n",
                       a.x(p.size_bytes), a.y(p.value), human_size(p.size_bytes), p.size_bytes, what, p.value, esc(s.unit));
  // The measured plateau: a bar over the sizes its median was taken from.
  if (s.plateau && s.plateau_size > 0) {
    const int64_t from = s.plateau_from > 0 ? s.plateau_from : s.plateau_size;
    hline(out, a, "plateau", *s.plateau, a.x(from) - 8, a.x(s.plateau_size) + 8, "stroke=\"#b00020\" stroke-width=\"4\" stroke-opacity=\"0.7\"",
          fmt::format("measured plateau {:.2f} {} (median over {} to {})", *s.plateau, s.unit, human_size(from), human_size(s.plateau_size)));
  }
  out << "</svg>\n";
  out << "<p class=\"legend\"><span>● " << what << " per size</span>"
      << (s.expected ? "<span style=\"color:#2e7d32\">- - expected plateau</span>" : "<span class=\"muted\">no expected plateau (no bundle for this run)</span>")
      << (s.expected && s.expected_present && *s.expected_present + 1e-6 < *s.expected
              ? "<span style=\"color:#f57c00\">··· as the parts are trained now</span>"
              : "")
      << (s.plateau ? "<span style=\"color:#b00020\">▬ measured plateau</span>" : "") << (s.baseline_median ? "<span style=\"color:#6a1b9a\">··· baseline</span>" : "")
      << "</p>\n";
}

std::string opt_value(const std::optional<double>& v, const std::string& unit) {
  return v ? fmt::format("{:.2f} {}", *v, unit) : std::string("—");
}

void run_section(const RunSummary& s, size_t i, std::ostream& out) {
  std::string shape;
  if (s.tool == "perftest") shape = s.nic.empty() ? "perftest" : "perftest on " + s.nic;
  else if (s.ranks > 0) shape = fmt::format("{} ranks on {} host(s)", s.ranks, s.hosts.size());
  else shape = s.tool;
  out << fmt::format("<section class=\"run\" id=\"run-{}\">\n<h2>{} — {} ({})</h2>\n", i + 1, esc(s.file),
                     esc(s.collective.empty() ? "unknown test" : s.collective), esc(shape));
  if (!s.hosts.empty()) {
    std::string hosts;
    for (const auto& h : s.hosts) hosts += (hosts.empty() ? "" : ", ") + h;
    out << "<p class=\"muted\">hosts: " << esc(hosts) << "</p>\n";
  }
  const bool corrupt = s.wrong.value_or(0) > 0 || s.out_of_bounds.value_or(0) > 0;
  if (corrupt)
    out << fmt::format("<p class=\"odd\">DATA CORRUPTION: {} wrong elements, out-of-bounds values {}</p>\n", s.wrong.value_or(0),
                       s.out_of_bounds.value_or(0));
  out << fmt::format("<div class=\"verdict{}\"><div class=\"cause\">verdict: <span class=\"status\">{}</span></div><p class=\"why\">{}</p>", 
                     s.status == "ok" && !corrupt ? " ok" : "", esc(s.status), esc(s.why));
  // The verdict's why usually names the bottleneck already: say it once.
  if (!s.bottleneck.empty() && s.why.find(s.bottleneck) == std::string::npos)
    out << "<p>likely bottleneck: " << esc(s.bottleneck) << "</p>";
  out << "</div>\n";
  out << "<table><tr><th>plateau</th><th>expected (nominal)</th><th>as trained now</th><th>baseline median</th><th>latency floor</th><th>#wrong</th></tr>\n";
  out << fmt::format("<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n</table>\n",
                     esc(opt_value(s.plateau, s.unit)), esc(opt_value(s.expected, s.unit)), esc(opt_value(s.expected_present, s.unit)),
                     esc(opt_value(s.baseline_median, s.unit)),
                     s.latency_floor_us ? fmt::format("{:.2f} µs at {}", *s.latency_floor_us, human_size(s.latency_floor_size)) : "—",
                     s.wrong ? std::to_string(*s.wrong) : "not checked");
  if (!s.expected_formula.empty()) out << "<p>expected = <code>" << esc(s.expected_formula) << "</code></p>\n";
  chart(s, out);
  out << "</section>\n";
}

}  // namespace

void render_perf_html(const std::vector<RunSummary>& runs, const Report& report, std::ostream& out) {
  html_head("ccdiag perf: " + report.verdict.root_cause, out);
  out << fmt::format("<h1>ccdiag perf — {} run(s)</h1>\n", runs.size());
  out << "<p class=\"muted\">ccdiag " << esc(report.ccdiag_version) << "</p>\n";
  html_verdict_section(report, out);
  for (size_t i = 0; i < runs.size(); ++i) run_section(runs[i], i, out);
  html_unchecked_section(report, out);
  out << "</body>\n</html>\n";
}

}  // namespace ccdiag
