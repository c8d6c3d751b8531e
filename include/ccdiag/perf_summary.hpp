// What `ccdiag perf` judged about one benchmark run, as its renderers need it
// (report/perf_render.hpp: the .prom metrics and the HTML chart). The data
// model only, so the analysis that computes it (analysis/perf/) and the
// renderers meet in the model layer. Units are those nccl-tests / perftest
// print (`unit`): GB/s busbw for nccl-tests, Gb/s for perftest; renderers
// convert to base units. A value nothing measured stays unset: rendered as
// absent, never as zero.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ccdiag::perf {

struct BandwidthPoint {
  int64_t size_bytes = 0;
  double value = 0;  // busbw (nccl-tests) or BW average (perftest), median over repeats of this size
};

struct RunSummary {
  std::string file;        // as given on the command line
  std::string tool;        // "nccl-tests" | "perftest"
  std::string collective;  // "all_reduce", ...; perftest: "ib_write_bw", ...; empty when unknown
  std::vector<std::string> hosts;  // from the device lines, rank order; empty when not printed
  int ranks = 0;                   // nccl-tests ranks (device lines); 0 when not printed
  std::string nic;                 // perftest device
  std::string unit;                // "GB/s" | "Gb/s"
  std::vector<BandwidthPoint> points;  // ascending size
  std::optional<double> plateau;
  int64_t plateau_size = 0;        // largest size of the plateau
  int64_t plateau_from = 0;        // smallest size the plateau's median was taken over
  std::optional<double> expected;  // nominal expected plateau (what the verdict compares)
  std::optional<double> expected_present;  // as the parts are trained now
  std::string expected_formula;
  double tolerance = 0;
  std::optional<double> baseline_median;
  std::optional<double> latency_floor_us;
  int64_t latency_floor_size = 0;
  std::optional<int64_t> wrong;          // `#wrong` sum; unset when the run did not check results
  std::optional<int64_t> out_of_bounds;  // `# Out of bounds values`
  std::string status;                    // ok | below_expected | regression | unjudged
  std::string why, bottleneck, bottleneck_cause;
  double shortfall = 0;
};

}  // namespace ccdiag::perf
