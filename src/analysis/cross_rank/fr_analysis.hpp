// Cross-rank analysis of flight-recorder dumps (docs/fr.md, and where it goes
// beyond PyTorch's fr_trace, docs/fr.md "How the culprit is chosen"). Pure: no I/O.
//
//  - Process groups are keyed by name + member set (pg_config), so two groups
//    sharing a name (split_group) stay apart.
//  - Collectives match by collective_seq_id; entries that share a seq form a
//    coalesced unit (members + the closing coalesced entry) compared as one.
//    Batched send/recv (members is_p2p, closing "coalesced" entry not) form one
//    p2p unit whose state is the closing entry's.
//  - P2P matches per (src, dst) pair in issue order; completed ops are paired
//    from the newest backwards, pending ones from the oldest forwards, so ring
//    buffers that dropped different amounts of history still line up.
//  - A rank absent from a collective is classified: out_of_window (its ring
//    buffer no longer covers the seq: not a fault), not_yet_arrived (blocked
//    in an earlier incomplete op, named), never_called (idle: its own work all
//    completed). The culprit side is the minority, never "the first file".
//  - Only the first fault of each group is a finding; later seqs of that group
//    are counted as its tail (consequences).
//  - Causal ordering: a group's missing ranks that are blocked in another
//    group's faulty collective (or are its culprits) make it a cascade of it.
//  - All members entered, none completed: hang_no_completion (below the
//    framework). Slow ranks: enqueue lag vs the median, with statistics.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/fr_dump.hpp"
#include "ccdiag/result.hpp"

namespace ccdiag::fr {

struct FrFinding {
  std::string kind;            // missing_ranks | type_mismatch | size_mismatch | dtype_mismatch |
                               // state_mismatch | hang_no_completion | slow_rank | no_dump | p2p_unmatched
  std::string process_group;   // pg name ("0" = default group)
  std::string pg_desc;
  std::optional<int64_t> seq;  // collective_seq_id, or p2p_seq_id when seq_kind == "p2p"
  std::string seq_kind = "collective";
  std::vector<int> ranks;      // culprit ranks (global)
  std::string op;              // profiling name at the fault
  std::string summary;
  std::string severity = "error";  // info | warning | error | critical
  nlohmann::json details = nlohmann::json::object();
  std::string stack;           // call site of the culprit (innermost first), may be empty
  int stack_rank = -1;
  std::vector<std::string> files;  // dumps it rests on (culprits first, bounded)
  std::optional<std::string> caused_by;  // "process group 3 seq 1280" for cascades
  int64_t time_ns = -1;        // when the faulty op was enqueued (earliest present rank), for ordering
};

struct FrAnalyzeOptions {
  double slow_min_lag_ms = 10.0;       // below this a rank is not "slow"
  double slow_min_last_fraction = 0.5; // must be last to enqueue in at least this share
  size_t slow_min_collectives = 5;
};

struct FrAnalysis {
  std::vector<FrFinding> findings;  // roots first (earliest first), then cascades
  size_t ranks = 0;
  size_t groups = 0;
  size_t collectives_checked = 0;
  size_t entries = 0;
  std::vector<std::string> notes;   // version skew, missing pg_config, ...
};

FrAnalysis analyze_fr(const std::vector<RankDump>& dumps, const FrAnalyzeOptions& opts = {});

// Dumps from different jobs: the default group's member set differs between
// dumps. Returns the error naming the two files, or nothing.
std::optional<Error> check_same_job(const std::vector<RankDump>& dumps);

}  // namespace ccdiag::fr
