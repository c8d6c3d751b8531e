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

struct HostDifference {
  std::string attribute;                // "nccl_version", "gpus", ...
  std::string majority;                 // the value most hosts have
  size_t majority_hosts = 0;
  struct Other {
    std::string value;
    std::vector<std::string> hosts;
  };
  std::vector<Other> others;            // each minority value with its hosts
};

enum class RankState { front, behind, missing };
std::string_view to_string(RankState s);

struct RankRow {
  int rank = -1;
  std::string host;                     // empty when missing
  std::optional<int64_t> last_started, last_completed;
  int64_t behind_by = 0;                // front - this rank's position (0 at the front)
  RankState state = RankState::front;
  std::string op, fr_state;
};

struct SequencePicture {
  std::string process_group;            // "" = default group
  int group_size = 0;                   // ranks expected (max reported size, or highest rank + 1)
  int64_t front = 0;                    // highest sequence number any rank reached
  size_t at_front = 0, behind = 0, missing = 0;
  std::vector<RankRow> rows;            // every rank 0..group_size-1, by rank
};

struct FleetCensusGroup {
  std::string signature;
  std::vector<int> ranks;               // sorted
  std::vector<std::string> hosts;       // distinct, sorted
  bool odd = false;                     // smaller than the largest group
};

struct FleetSummary {
  size_t hosts_total = 0, hosts_answered = 0;
  std::vector<const HostSummary*> not_answered;
  std::vector<HostDifference> differences;
  std::vector<SequencePicture> sequences;
  std::vector<FleetCensusGroup> census;      // largest first
  const std::vector<HostSummary>* hosts = nullptr;
};

// The summary points into `in` (which must outlive it).
FleetSummary summarize_fleet(const FleetInput& in);

nlohmann::json fleet_to_json(const FleetSummary& s);

}  // namespace ccdiag
