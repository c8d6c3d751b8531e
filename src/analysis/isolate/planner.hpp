// `ccdiag isolate`: a rail-aware group-testing plan that finds the slow or
// broken host or NIC among N hosts in few rounds (docs/isolate.md; reference
// perf-and-fleet.md §5.4-5.5). Pure and replayable: the plan is a function of
// the options and of the results seen so far, so `--results DIR` re-derives
// every earlier round from its result files and prints the next one.
//
// A test runs a Ring all_reduce over a set of hosts pinned to one rail (GPU r
// and NIC r of every host). In a ring every link carries every chunk, so the
// test is an OR over its members: it fails iff a member's NIC/cable/host on
// that rail is bad.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ccdiag::isolate {

struct Options {
  std::vector<std::string> hosts;  // suspects, in the given order
  std::vector<std::string> good;   // known-good hosts usable as partners
  int rails = 8;                   // GPU/NIC pairs per host (rail r = GPU r + NIC r)
  std::vector<std::string> nics;   // NIC of each rail; default mlx5_<r>
  std::string launcher = "srun";   // srun | mpirun
  std::string mode = "pairs";      // pairs (3 rounds, many concurrent tests) | bisect (O(log n) rounds, 2 tests each)
  double floor_gbs = 43.0;         // pass when the busbw plateau >= floor (one NDR NIC per rank: 46-49 typical)
  std::string binary = "all_reduce_perf";
  std::string size = "4G";
  int test_timeout_s = 180;
  std::string results_dir = "isolate-results";
};

struct Test {
  std::string id;                  // file stem of its result: <results_dir>/<id>.txt
  std::vector<std::string> hosts;
  int rail = 0;
};

struct Round {
  int number = 0;
  std::string name;     // rails | pairs | disambiguate | bisect
  std::string purpose;  // one line
  std::vector<Test> tests;
  std::vector<std::optional<bool>> outcome;  // per test: pass / fail / not yet run
};

struct Conclusion {
  // pending (a round is to be run) | culprit_host | culprit_nic | culprit_link |
  // several | not_reproduced | inconclusive
  std::string kind = "pending";
  std::vector<std::string> hosts;  // culprit(s)
  int rail = -1;
  std::string summary;
};

struct Plan {
  std::vector<Round> rounds;  // done rounds, then the next one (outcomes unset) when pending
  Conclusion conclusion;
  std::vector<std::string> decisions;  // what each round's results decided, in order
};

// Outcome of a test: true = pass, false = fail, nullopt = result not available yet.
using Oracle = std::function<std::optional<bool>(const Test&)>;

// Replays the plan from round 1 with `oracle` until a round has missing results
// (that round is the next to run) or a conclusion is reached.
Plan advance(const Options& opts, const Oracle& oracle);

// The exact shell line of one test (launcher, host list, rail pinning, outer timeout, output file).
std::string command_for(const Options& opts, const Test& t);

// Ceiling of log2(n) for n >= 1.
int ceil_log2(size_t n);

}  // namespace ccdiag::isolate
