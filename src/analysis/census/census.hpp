// Cross-rank stack census (docs/stacks.md "census"): group processes by the
// normalised stack of their main thread, name the odd ranks out, and turn that
// into findings for the decision tree. Pure; works on live captures and on
// `stacks.process` evidence from bundles of many hosts alike.
//
// Findings:
//   stacks.rank_outside_collective (primary, framework): most ranks wait in a
//     collective / CUDA sync and this one is in host code -> supports
//     rank_stuck_in_host_code.
//   stacks.rank_in_different_collective (primary): the odd rank waits in a
//     different NCCL/c10d call -> supports mismatched_collectives, or
//     wrong_process_group when it waits on another process group.
//   stacks.groups_wait_on_each_other (primary, no single culprit): rank A
//     waits in process group P for rank B, which waits in group Q (that A
//     belongs to) for A -> supports wrong_process_group; which of the two
//     went wrong the stacks cannot tell (the flight recorder can).
//   Entries name the process group each waiting rank is in (name, parallel
//   dimension, members) when its Python frames show one; the collective
//   sequence number is not in the stacks (the flight recorder has it).
//   stacks.census (context): the one-line census.
//   stacks.ranks_progressing (context): most ranks' main threads kept waking
//     in the window just before the capture (ProcessStacks::progress): the
//     job is running, the snapshot is of a moving job, and no rank is named
//     odd one out from it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/evidence_set.hpp"
#include "ccdiag/finding.hpp"
#include "ccdiag/stack_model.hpp"

namespace ccdiag {

// Normalised signature: function names innermost first, parameter lists and
// addresses dropped, direct recursion collapsed, unknown frames kept as "??"
// by module.
std::string stack_signature(const ThreadStack& t, size_t max_frames = 16);

struct CensusMember {
  std::optional<std::string> host;
  std::optional<int> rank;
  int64_t pid = 0;
  std::optional<C10dWaitInfo> wait;  // the c10d collective its main thread waits in (Python frames)
  std::optional<ThreadProgress> progress;  // main-thread wake-ups just before the capture (live captures)
};

// A main thread that woke at least this often in the window before the
// capture is moving: a rank blocked in a hung collective does not wake.
inline constexpr uint64_t kMovingWakeups = 3;

struct CensusGroup {
  std::string signature;
  std::string activity;                // thread_activity of the first member's main thread
  bool in_collective = false;
  std::vector<CensusMember> members;
};

struct Census {
  std::vector<CensusGroup> groups;     // largest first
  std::vector<std::string> lines;      // "7 ranks (0-4,6,7): in cudaStreamSynchronize", "rank 5: ..."
  std::vector<CensusMember> odd;       // members outside the majority group
  std::vector<Finding> findings;
};

Census run_census(const std::vector<ProcessStacks>& processes);
nlohmann::json to_json(const Census& c);

// Reads every `stacks.process` evidence item in `set` and appends the census
// findings (used by diagnose on bundles).
void append_census_findings(EvidenceSet& set);

// Census findings about a rank that a flight-recorder root finding also
// names take that finding's process group and collective sequence number
// (fields.seq, seq_process_group, seq_from; the summary says so): the stacks
// have none. Called once both are in `set` (diagnose on bundles with dumps).
void attach_fr_sequence(EvidenceSet& set);

}  // namespace ccdiag
