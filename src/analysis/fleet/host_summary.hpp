// HostSummary: the compact record `ccdiag analyze` keeps per host, so that
// thousands of bundles are analysed with bounded memory: each bundle is read,
// summarised here, and dropped (raw artefacts are never held across hosts).
//
// Pure: built from one host's EvidenceSet (its bundle's evidence plus the
// findings derived from its raw artefacts) and its manifest fields. Every
// evidence kind is optional; a field nobody reported stays unset (rendered
// "—"), which is different from a reported zero.
//
// Evidence kinds and fields read, in the shapes their collectors write them
// (ccdiag/evidence_kinds.hpp, docs/evidence-kinds.md):
//   host.versions   nccl_version, driver_version, cuda_toolkit_version
//   host.dev_shm    size_bytes
//   gpu.*           one GPU per distinct subject.gpu / data.uuid / data.bdf;
//                   data.name; data.clocks_event_reasons
//                   (array of reason strings, or object reason -> bool)
//   nvlink.link     one item per link: active, counters_t0/t1 {crc_flit, crc_data, replay, recovery}
//   pcie.link       path[]: downtrained when a link on the path lost lanes
//   rdma.port       subject.nic/port; state ("ACTIVE")
//   rdma.counters   counters {name: {delta}} when sampled_twice (error counters only)
//   ranks.process   subject.rank (or data.rank), data.world_size
//   stacks.process  subject.rank/pid; data.signature or data.threads[].frames[].function
//   fr.rank_progress / any fr.* or nccl.* evidence with data.last_{enqueued,started,completed}_seq
//   findings        kernel.xid (fields.xid), and any finding with subject.rank + subject.seq
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/evidence_set.hpp"
#include "ccdiag/fleet_summary.hpp"

namespace ccdiag {

// One rank's progress in one process group (from FR / NCCL evidence or findings).
struct RankProgress {
  std::string process_group;   // "" when not known (the default group)
  int rank = -1;
  std::string host;
  std::optional<int64_t> last_enqueued, last_started, last_completed;
  std::optional<int> group_size;
  std::vector<int> members;    // the group's global ranks when the source knows them
  std::string op, state;
};

// One rank's stack signature (census input).
struct RankStack {
  int rank = -1;
  int64_t pid = 0;
  std::string host;
  std::string signature;       // normalised top frames, " < " separated (innermost first)
};

// What one host contributes to the fleet picture.
struct HostContribution {
  HostSummary summary;
  std::vector<RankProgress> progress;
  std::vector<RankStack> stacks;
  std::optional<int> world_size;
};

// Summarises one host. `set` holds only that host's evidence and findings.
HostContribution summarize_host(const std::string& host, const std::string& input, const nlohmann::json& manifest,
                                const EvidenceSet& set);

// Stack signature of one stacks.process item; empty when it has no frames.
std::string stack_signature(const nlohmann::json& data);

// Bounds one host's evidence before it joins the fleet-wide set the decision
// tree reads: evidence data larger than `max_data_bytes` keeps only its scalar
// fields (plus "truncated_by_analyze": true); at most `max_per_id` findings per
// finding id are kept (the count of dropped ones goes into the kept first one's
// fields.repeated). Returns the number of findings dropped.
size_t compact_host_set(EvidenceSet& set, size_t max_data_bytes = 16384, size_t max_per_id = 16);

}  // namespace ccdiag
