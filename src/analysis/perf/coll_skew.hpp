// Slow communicator / slow rank from per-rank collective timings of any
// source (profiler rings, NCCL INFO logs; docs/perf.md "Slow rank, link, node"),
// with the rules of the flight-recorder analysis (slow_comm.hpp):
//
//  * wire time of one collective = the time of the rank that waited least
//    (min over ranks of done - arrive): the last arriver does not wait, so its
//    time is the wire; the others' long times are waiting (arrival skew);
//  * communicators are compared, never ranks inside one: per (communicator,
//    function, count) the median wire time over >= min_collectives (persistence),
//    against communicators of the same function, count and size; slow when the
//    modified z > 3.5 (MAD floored) AND wire >= 1.5 x the median;
//  * each communicator is a group test over processes: members of a healthy one
//    are cleared (COMP), the only uncleared member of a slow one is named (DD);
//  * late arrival is kept apart: a process whose median lag behind the
//    collective's median arrival is an outlier (modified z > 3.5), >= late_min_ms,
//    and late in >= 60 % of its collectives is a compute/input straggler; when
//    every process of a host (two or more) is late, the host is named.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ccdiag/coll_timing.hpp"

namespace ccdiag::perf {

struct SkewOptions {
  int min_collectives = 5;
  double z_threshold = 3.5;
  double min_ratio = 1.5;
  double mad_floor = 0.02;       // of the median: a tight set does not flag noise
  double late_fraction = 0.6;
  double late_min_ms = 1.0;      // raised to 2 x the clock's resolution by the callers
};

struct CommWire {
  std::string comm, comm_name, func;
  uint64_t count = 0;
  int nranks = 0;
  std::vector<std::string> members;  // process keys
  int collectives = 0;               // with a wire time
  double wire_ms = 0;
  double z = 0;
  bool compared = false, slow = false;
};

struct LateProcess {
  std::string member;
  int collectives = 0;
  double fraction_late = 0;
  double median_lag_ms = 0;
  double z = 0;
  double own_ms = -1, others_ms = -1;  // when it is the last: its time, its peers' (-1: no completion times)
};

struct LateHost {
  std::string host;
  std::vector<std::string> members;
  double median_lag_ms = 0;
};

struct SkewAnalysis {
  std::map<std::string, RankProcess> procs;  // key -> process
  std::map<std::string, std::map<std::string, int>> comm_ranks;  // process key -> comm -> rank
  std::vector<CommWire> comms;
  std::vector<std::string> suspects, culprits;  // process keys
  std::vector<LateProcess> late;
  std::vector<LateHost> late_hosts;
  int collectives = 0;   // matched across >= 2 ranks
  int timed = 0;         // with a wire time
  std::vector<std::string> notes;
};

SkewAnalysis analyze_skew(const std::vector<CollTiming>& colls, const SkewOptions& opts = {});

}  // namespace ccdiag::perf
