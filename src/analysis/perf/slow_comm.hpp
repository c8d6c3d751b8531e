// Slow link / slow NIC from flight-recorder dumps, kept apart from arrival
// skew (reference perf-and-fleet.md §5.2-5.4; docs/perf.md "Slow rank, link, node").
//
// In a synchronous collective every rank finishes together, so a rank's
// duration is mostly waiting: the rank that arrives last shows the SHORTEST
// duration. The wire time of one collective is therefore the duration of the
// rank that waited least (the minimum over members), or, without GPU timing,
// completion minus the last arrival. A slow link or NIC slows the wire time of
// every communicator that uses it, so communicators are compared with each
// other (same operation, same size, same member count), never ranks inside one.
// Each communicator is then a group test: members of healthy communicators are
// cleared (COMP) and a member left alone in a slow one is named (DD).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/finding.hpp"
#include "ccdiag/fr_dump.hpp"
#include "ccdiag/result.hpp"

namespace ccdiag::perf {

struct CommStats {
  std::string pg;             // process group name
  std::string op;             // profiling name ("nccl:all_reduce")
  int64_t numel = 0;
  std::vector<int> ranks;     // members seen in the dumps
  int collectives = 0;        // complete collectives measured
  double wire_ms = 0;         // median wire time
  double z = 0;               // modified z-score of wire_ms among comparable communicators
  bool slow = false;
};

struct LateRank {
  int rank = -1;
  std::string host;
  double fraction_last = 0;   // of the collectives it took part in
  double median_lag_ms = 0;
  double own_median_ms = 0, others_median_ms = 0;  // durations when it is last: its own, its peers' (they wait for it)
};

struct SlowCommAnalysis {
  std::vector<CommStats> comms;
  std::vector<int> suspects;      // ranks left uncleared by the slow communicators (COMP)
  std::vector<int> culprits;      // ranks named: the only uncleared member of a slow communicator (DD)
  std::vector<LateRank> late;     // arrival skew (compute stragglers), reported as such
  int collectives = 0;
  std::vector<std::string> notes;
};

struct SlowCommOptions {
  int min_collectives = 5;        // persistence: a communicator needs this many measurements
  double z_threshold = 3.5;       // modified z (Iglewicz & Hoaglin)
  double min_ratio = 1.5;         // and its wire time >= 1.5 x the median of its peers
  double mad_floor = 0.02;        // MAD floored at 2 % of the median: a tight set does not flag noise
  double late_fraction = 0.6;     // arrival skew: last in >= 60 % of collectives
  double late_min_ms = 1.0;
};

SlowCommAnalysis analyze_slow_comms(const std::vector<fr::RankDump>& dumps, const SlowCommOptions& opts = {});

std::vector<Finding> slow_comm_findings(const SlowCommAnalysis& a, const std::vector<fr::RankDump>& dumps);
nlohmann::json slow_comm_json(const SlowCommAnalysis& a);

}  // namespace ccdiag::perf
