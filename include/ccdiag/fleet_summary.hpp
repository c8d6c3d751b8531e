// The fleet summary of `ccdiag analyze`: the per-host records and the
// cross-host picture built from them. The data model only, so the analysis
// that computes it (analysis/fleet/) and the renderers that print it
// (report/render_fleet.hpp, report/html.hpp) meet in the model layer; its JSON
// is in src/model/fleet_summary.cpp.
//
// A field nobody reported stays unset (rendered "—"), which is different from
// a reported zero.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccdiag {

enum class HostStatus { ok, bad_bundle, no_bundle };
std::string_view to_string(HostStatus s);

struct HostHardware {
  std::optional<int> gpus;
  std::string gpu_model;                    // most common model name on the host
  std::optional<int> nvlink_active;         // summed over GPUs
  std::optional<int> nvlink_total;
  std::optional<int64_t> nvlink_errors;     // summed CRC/replay/recovery counters
  std::optional<int> nic_ports;
  std::optional<int> nic_ports_active;
  std::optional<int64_t> ib_error_increase; // summed error-counter deltas
  std::optional<int> pcie_links;
  std::optional<int> pcie_downtrained;
  std::vector<std::string> throttled_gpus;  // "gpu: reason,reason"
  std::map<int, int> xids;                  // Xid code -> events
  int fell_off_bus = 0;
};

// The compact record kept per host (analysis/fleet/host_summary.hpp builds it).
struct HostSummary {
  std::string host;
  std::string input;           // the bundle path, or empty when no bundle
  HostStatus status = HostStatus::ok;
  std::string error;           // why the bundle could not be read / the host did not answer
  std::string time, kernel, ccdiag_version;
  std::string nccl_version, driver_version, cuda_version;
  std::optional<int64_t> dev_shm_bytes;
  HostHardware hw;
  std::vector<int> ranks;      // training ranks seen on the host
  size_t findings = 0, problems = 0;
  std::string worst_finding;   // summary of the most severe finding
  size_t unchecked = 0;
};

void to_json(nlohmann::json& j, const HostSummary& s);

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

// missing: no host reported this rank (its bundle is absent or unreadable, or
// it carried no progress record): nothing is known. never_joined: no record
// of its own, and a finding of its peers says it never arrived (a flight
// recorder's "never called", a desync report, a store key never set).
enum class RankState { front, behind, missing, never_joined };
std::string_view to_string(RankState s);

struct RankRow {
  int rank = -1;
  std::string host;                     // empty when missing
  std::optional<int64_t> last_started, last_completed;
  int64_t behind_by = 0;                // front - this rank's position (0 at the front)
  RankState state = RankState::front;
  std::string op, fr_state;
  std::string absence;                  // never_joined: the finding that says so
};

struct SequencePicture {
  std::string process_group;            // "" = default group
  int group_size = 0;                   // ranks expected (max reported size, or highest rank + 1)
  int64_t front = 0;                    // highest sequence number any rank reached
  size_t at_front = 0, behind = 0, missing = 0, never_joined = 0;  // missing: no data
  std::vector<RankRow> rows;            // every rank 0..group_size-1, by rank
};

struct FleetCensusGroup {
  std::string signature;
  std::vector<int> ranks;               // sorted
  std::vector<std::string> hosts;       // distinct, sorted
  bool odd = false;                     // smaller than the largest group
};

// analysis/fleet/fleet_summary.hpp summarize_fleet builds it; it points into
// the FleetInput's hosts, which must outlive it.
struct FleetSummary {
  size_t hosts_total = 0, hosts_answered = 0;
  std::vector<const HostSummary*> not_answered;
  std::vector<HostDifference> differences;
  std::vector<SequencePicture> sequences;
  std::vector<FleetCensusGroup> census;      // largest first
  const std::vector<HostSummary>* hosts = nullptr;
};

nlohmann::json fleet_to_json(const FleetSummary& s);

}  // namespace ccdiag
