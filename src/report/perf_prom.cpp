#include <string>

#include "report/perf_render.hpp"
#include "report/prom_text.hpp"

namespace ccdiag {

namespace {

// nccl-tests print GB/s (10^9 bytes/s), perftest Gb/s (10^9 bits/s).
double to_bytes_per_second(double v, const std::string& unit) { return unit == "Gb/s" ? v * 1e9 / 8 : v * 1e9; }

std::string base_name(const std::string& p) {
  const auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

// Every series of a run carries the same labels, so PromQL can join them.
// Unknown parts are "" (not left out) so every series has one label set.
PromLabels run_labels(const perf::RunSummary& s) {
  std::string hosts;
  for (const auto& h : s.hosts) hosts += (hosts.empty() ? "" : ",") + h;
  return {{"collective", s.collective.empty() ? "unknown" : s.collective},
          {"host", hosts},
          {"ranks", s.ranks > 0 ? std::to_string(s.ranks) : ""},
          {"device", s.nic},  // perftest's NIC, named as node_exporter names IB devices
          {"file", base_name(s.file)}};
}

PromLabels with(PromLabels l, const char* k, std::string v) {
  l.emplace_back(k, std::move(v));
  return l;
}

}  // namespace

std::string render_perf_prom(const std::vector<perf::RunSummary>& runs, double run_timestamp_s) {
  PromText m;
  m.set("ccdiag_run_timestamp_seconds", "gauge", kRunTimestampHelp, {{"mode", "perf"}}, run_timestamp_s);
  for (const auto& s : runs) {
    const PromLabels l = run_labels(s);
    m.set("ccdiag_perf_verdict_info", "gauge", "Verdict of a benchmark run (ok, below_expected, regression, unjudged); value is always 1.",
          with(with(l, "status", s.status), "bottleneck_cause", s.bottleneck_cause), 1);
    if (s.plateau)
      m.set("ccdiag_perf_plateau_bandwidth_bytes_per_second", "gauge",
            "Measured plateau of a benchmark run: nccl-tests busbw, perftest BW average.", l, to_bytes_per_second(*s.plateau, s.unit));
    if (s.expected) {
      const char* help = "Plateau the hardware in the bundles allows: nominal (every part at its maximum) and as trained now.";
      m.set("ccdiag_perf_expected_bandwidth_bytes_per_second", "gauge", help, with(l, "kind", "nominal"),
            to_bytes_per_second(*s.expected, s.unit));
      if (s.expected_present)
        m.set("ccdiag_perf_expected_bandwidth_bytes_per_second", "gauge", help, with(l, "kind", "as_trained"),
              to_bytes_per_second(*s.expected_present, s.unit));
      // Only with both sides measured: a ratio against nothing would read as 0.
      if (s.plateau && *s.expected > 0)
        m.set("ccdiag_perf_plateau_expected_ratio", "gauge", "Measured plateau over the nominal expected plateau (below 1 - tolerance: below_expected).",
              l, *s.plateau / *s.expected);
    }
    if (s.baseline_median)
      m.set("ccdiag_perf_baseline_bandwidth_bytes_per_second", "gauge", "Median plateau of the baseline entry the run was compared with.", l,
            to_bytes_per_second(*s.baseline_median, s.unit));
    if (s.latency_floor_us)
      m.set("ccdiag_perf_latency_floor_seconds", "gauge", "Smallest time of any size (nccl-tests) or smallest typical latency (perftest).", l,
            *s.latency_floor_us / 1e6);
    if (s.wrong)
      m.set("ccdiag_perf_wrong_elements", "gauge", "Sum of the #wrong column of a run: any non-zero value is data corruption.", l,
            static_cast<double>(*s.wrong));
    if (s.out_of_bounds)
      m.set("ccdiag_perf_out_of_bounds_values", "gauge", "nccl-tests' \"Out of bounds values\" count: any non-zero value is data corruption.", l,
            static_cast<double>(*s.out_of_bounds));
  }
  return m.text();
}

}  // namespace ccdiag
