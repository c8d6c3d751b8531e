// Judging benchmark results (docs/perf.md): per size algbw/busbw/latency, the
// plateau busbw, the latency floor, data-corruption counts, the bandwidth the
// hardware allows (topology.hpp) and a verdict ok / below_expected /
// regression / unjudged. Pure: no I/O.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/perf/topology.hpp"
#include "ccdiag/finding.hpp"
#include "ccdiag/perf_run.hpp"
#include "ccdiag/perf_summary.hpp"
#include "ccdiag/result.hpp"

namespace ccdiag::perf {

// Defaults from the reference baselines (docs/perf.md): ring busbw reaches about
// 80 % of the NVLink line rate and 94 % of the NIC line rate; ib_write_bw 95 %.
inline constexpr double kNvlinkEfficiency = 0.80;
inline constexpr double kNetEfficiency = 0.94;
inline constexpr double kPerftestEfficiency = 0.95;
inline constexpr double kTolIntra = 0.08;  // below expected x (1 - tol) = below_expected
inline constexpr double kTolNet = 0.10;

struct Expected {
  double nominal = 0;        // GB/s busbw (nccl-tests) or Gb/s (perftest) if every part ran at its maximum
  double present = 0;        // with the parts as trained now
  double tolerance = kTolNet;
  std::string formula;       // "8 NICs x min(NIC 400 Gb/s / 8, GPU PCIe 63.0 GB/s, ...) x 0.94"
  std::string present_formula;
  std::string unit = "GB/s";
  // The part that makes `present` lower than `nominal`, and the catalogue cause it points at.
  std::string degraded_part, degraded_cause;
  std::vector<std::string> caveats;
};

struct BaselineEntry {
  std::string key;              // collective/ranks/hosts/size
  std::vector<double> samples;  // plateau busbw of the saved runs
  std::string fingerprint;
};

struct Baseline {
  std::string host, fingerprint, nccl_version, nccl_tests_version, created;
  std::vector<BaselineEntry> entries;
};

struct RunVerdict {
  std::string status = "unjudged";  // ok | below_expected | regression | unjudged
  double shortfall = 0;             // 1 - measured / expected (below_expected or regression)
  std::string bottleneck;           // likely bottleneck, one line
  std::string bottleneck_cause;     // catalogue id when one is named
  std::string why;                  // one line for humans
  std::optional<double> baseline_median;
  double baseline_threshold = 0;
};

struct RunAnalysis {
  const PerfRun* run = nullptr;
  std::string key;                         // baseline key
  std::optional<double> plateau;           // GB/s busbw (nccl-tests) or Gb/s (perftest BW average)
  int64_t plateau_size = 0;
  int64_t plateau_from = 0;                // smallest size the plateau median was taken over
  int plateau_points = 0;
  std::vector<BandwidthPoint> points;      // per size, the median over repeats (ascending size)
  std::optional<double> latency_floor_us;  // smallest time (nccl-tests) or t_typical/t_avg (perftest)
  int64_t latency_floor_size = 0;
  int64_t wrong_total = 0;                 // sum of #wrong over rows
  std::vector<int> wrong_lines;
  std::optional<Expected> expected;
  RunVerdict verdict;
  std::vector<std::string> notes;
};

// Plateau, latency floor, corruption counts of one run.
RunAnalysis measure(const PerfRun& run);
// Bandwidth the hardware allows for this run; nullopt when the collective,
// the run's shape or the topology leave nothing to judge (reason in `why`).
std::optional<Expected> expected_for(const PerfRun& run, const std::vector<HostTopology>& topo, std::string& why);
// Verdict against `expected` and/or the baseline.
void judge(RunAnalysis& a, const std::vector<HostTopology>& topo, const Baseline* baseline);

// The findings (data corruption first), for the report and the decision tree.
std::vector<Finding> to_findings(const std::vector<RunAnalysis>& runs);

// What the renderers (report/perf_render.hpp) need of one judged run.
RunSummary summarize(const RunAnalysis& a);

// JSON of one analysed run (the `perf.results[]` items of docs/perf.md).
nlohmann::json run_json(const RunAnalysis& a);

// Baseline files (docs/perf.md "Baselines").
nlohmann::json baseline_json(const std::vector<RunAnalysis>& runs, const std::vector<HostTopology>& topo, const Baseline* merge_into,
                             const std::string& created);
Result<Baseline> parse_baseline(const nlohmann::json& j, const std::string& file);

// Robust statistics shared with the slow-rank analysis.
double median(std::vector<double> v);
double mad(const std::vector<double>& v);  // median absolute deviation (unscaled)

}  // namespace ccdiag::perf
