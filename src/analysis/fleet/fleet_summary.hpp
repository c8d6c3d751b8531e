// Cross-host summaries for `ccdiag analyze` (pure, deterministic):
//   - which hosts differ from the majority (versions, kernel, GPU count/model,
//     NIC ports, NVLink links, /dev/shm size);
//   - the rank x collective-sequence picture per process group: the front
//     (highest sequence number reached), who is behind it and by how much,
//     who is missing (a rank of the group that no host reported);
//   - the stack census: ranks grouped by the signature of their main thread,
//     largest group first, small groups flagged as the odd ones out;
//   - the per-host hardware table and the hosts that did not answer.
// Input is the compact per-host records of host_summary.hpp, never bundles.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/fleet/host_summary.hpp"
#include "ccdiag/fleet_summary.hpp"

namespace ccdiag {

// Collects HostContributions one at a time (bounded: per-host records only).
struct FleetInput {
  std::vector<HostSummary> hosts;       // every host, answered or not, in input order
  std::vector<RankProgress> progress;
  std::vector<RankStack> stacks;
  std::optional<int> world_size;

  void add(HostContribution c);
  void add_unanswered(const std::string& host, HostStatus status, const std::string& why,
                      const std::string& input = {});
};

// The summary points into `in` (which must outlive it).
FleetSummary summarize_fleet(const FleetInput& in);

}  // namespace ccdiag
