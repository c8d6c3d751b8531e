// Slow rank / link / node from per-rank timings (profiler rings, NCCL INFO
// logs): runs the communicator and arrival analysis (coll_skew.hpp) and the
// channel analysis (slow_channels.hpp) on one TimingSet, and turns them into
// findings and the `perf.rings` / `perf.logs` JSON (docs/perf.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/perf/coll_skew.hpp"
#include "analysis/perf/slow_channels.hpp"
#include "analysis/perf/topology.hpp"
#include "ccdiag/coll_timing.hpp"
#include "ccdiag/evidence_set.hpp"
#include "ccdiag/finding.hpp"

namespace ccdiag::perf {

// What the process of a culprit drives, when a bundle says (GPU -> nearest NIC).
struct ProcessHardware {
  std::string gpu;   // PCI BDF
  std::string nic;   // RDMA device
};

struct TimingAnalysis {
  std::string source;          // "profiler rings" | "NCCL INFO logs"
  double resolution_ms = 0;    // the clock's tick: lags below 2 ticks are not judged
  SkewAnalysis skew;
  ChannelAnalysis channels;
  std::map<std::string, ProcessHardware> hardware;  // process key -> what a bundle told
  std::vector<std::string> notes;                   // the reader's and the analyses'
};

TimingAnalysis analyze_timings(const TimingSet& set, const std::string& source, double resolution_ms);

// The GPU (ranks.process evidence of the bundles, or the log's busId) and its nearest NIC
// (pcie.link) of every process the analysis knows.
void attach_hardware(TimingAnalysis& a, const EvidenceSet& set, const std::vector<HostTopology>& topo);

// perf.slow_link (a process: its NIC/PCIe path; or a link between two), perf.slow_communicator,
// perf.slow_channel, perf.late_arrival, perf.slow_host. A named culprit supports `slow_link_or_nic`,
// a late process or host `straggler_or_timeout_too_short`.
std::vector<Finding> timing_findings(const TimingAnalysis& a);
nlohmann::json timing_json(const TimingAnalysis& a);
// Something slow was found (a culprit, a slow communicator or channel, a late process).
bool timing_problem(const TimingAnalysis& a);

}  // namespace ccdiag::perf
