// The renderers' view of a judged run (ccdiag/perf_summary.hpp): copied out of
// the analysis so report/ never sees analysis types (tests/layers).
#include "analysis/perf/perf_analysis.hpp"

namespace ccdiag::perf {

RunSummary summarize(const RunAnalysis& a) {
  const PerfRun& r = *a.run;
  RunSummary s;
  s.file = r.file;
  s.tool = r.tool == Tool::nccl_tests ? "nccl-tests" : "perftest";
  s.collective = r.collective;
  s.hosts = r.hosts();
  s.ranks = r.ranks();
  s.nic = r.nic;
  s.unit = r.tool == Tool::nccl_tests ? "GB/s" : "Gb/s";
  s.points = a.points;
  s.plateau = a.plateau;
  s.plateau_size = a.plateau_size;
  s.plateau_from = a.plateau_from;
  if (a.expected) {
    s.expected = a.expected->nominal;
    s.expected_present = a.expected->present;
    s.expected_formula = a.expected->formula;
    s.tolerance = a.expected->tolerance;
  }
  s.baseline_median = a.verdict.baseline_median;
  s.latency_floor_us = a.latency_floor_us;
  s.latency_floor_size = a.latency_floor_size;
  // `#wrong` is a count only where the run checked its results: the <= 2.11
  // float `error` column and `-c 0` (N/A) leave every row's count unset.
  bool checked = false;
  for (const auto& row : r.rows) checked = checked || row.oop.wrong || row.ip.wrong;
  if (checked) s.wrong = a.wrong_total;
  s.out_of_bounds = r.out_of_bounds;
  s.status = a.verdict.status;
  s.why = a.verdict.why;
  s.bottleneck = a.verdict.bottleneck;
  s.bottleneck_cause = a.verdict.bottleneck_cause;
  s.shortfall = a.verdict.shortfall;
  return s;
}

}  // namespace ccdiag::perf
