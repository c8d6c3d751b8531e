// The torchrun / torch.distributed.elastic console: what the agent says about
// its workers, read from the console log (or any log that holds it).
//
//  - "Sending process P closing signal SIGTERM": the agent stops the workers
//    that survived the first failure. Those workers (and the SIGTERM exit they
//    report, exitcode -15) are a cascade, never the culprit.
//  - The ChildFailedError table: "Failures:" and "Root Cause (first observed
//    failure):" blocks of entries (time, host, rank (local_rank), exitcode
//    (pid) (SIGNAL), traceback). The root cause is the first failure the
//    agent observed; with several consoles (one per node) the earliest wins.
//
// Only the root cause of a death by signal is decisive on its own (SIGKILL,
// SIGSEGV, SIGABRT, ...: the rank died). A root cause that exited with an
// error code is only the rank that raised first; after a timeout that is a
// victim, and the rank the agent had to stop instead — the one that never
// failed on its own — is the odd one out.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/finding.hpp"

namespace ccdiag::logs {

struct TorchrunFailure {
  std::optional<int> rank, local_rank;
  std::optional<int> exitcode;
  std::optional<int64_t> pid;
  std::string signal;         // "SIGKILL" when the exit was by signal
  std::string time;           // "2026-12-01_04:13:31" as printed
  std::string host;
  bool root_cause = false;    // listed under "Root Cause (first observed failure)"
  std::string file;
  int64_t line = 0;
};

struct TorchrunConsole {
  std::vector<TorchrunFailure> failures;
  std::set<int64_t> agent_terminated;  // pids the agent sent its closing signal
  // Ranks that logged a collective timeout (gloo.timeout, the NCCL watchdog):
  // filled by the analyser from its findings before the calls below.
  std::set<int> timed_out;
  // The call each of them timed out in, where the logs say ("all_reduce",
  // "recv"; NCCL's OpType "ALLREDUCE"): filled by the analyser.
  std::map<int, std::string> timed_out_call;
  // Ranks whose own lines say a collective failed under them (a timeout or a
  // gloo/NCCL peer that closed its socket), and every rank any finding names:
  // both filled by the analyser, like timed_out.
  std::set<int> collective_failed;
  std::set<int> known_ranks;
  // Ranks whose collective failed because a peer closed its connection (gloo
  // "Connection closed by peer", the store's peer, NCCL's remote error): some
  // process had already ended. Filled by the analyser.
  std::set<int> peer_closed;
  // Local ranks whose torchrun --log-dir files were given as inputs
  // (".../attempt_0/3/stderr.log": local rank 3), empty ones included: a rank
  // that exited 0 and printed nothing still has its folder.
  std::set<int> local_ranks_logged;
  // Ranks with an error of their own in the logs (an exception, a CUDA or
  // NCCL error), not a collective failing under them: filled by the analyser.
  std::set<int> own_error;
  // ... of which a plain Python exception (python.exception: a KeyError, an
  // AssertionError), not a CUDA, NCCL or collective error.
  std::set<int> own_exception;
  bool empty() const { return failures.empty() && agent_terminated.empty(); }
  // Rank of a worker pid, from the failure tables.
  std::optional<int> rank_of_pid(int64_t pid) const;
  // The root cause: the earliest "Root Cause" entry across consoles.
  const TorchrunFailure* root_cause() const;
};

// Streams blocks of one file at a time. A block without any of the markers
// costs one search per marker; tables spanning blocks are followed.
class TorchrunConsoleParser {
 public:
  void begin_file(const std::string& shown);
  void feed_block(std::string_view block);
  // The same, where the caller has counted the block's '\n' bytes already
  // (the analyser numbers its lines): a block without a marker is then not
  // read again to count them.
  void feed_block(std::string_view block, size_t newlines);
  const TorchrunConsole& result() const { return out_; }
  void reset() { *this = TorchrunConsoleParser(); }

 private:
  void feed_line(std::string_view line);
  TorchrunConsole out_;
  std::string file_;
  int64_t line_ = 0;
  enum class State { none, failures, root_cause } state_ = State::none;
  std::optional<TorchrunFailure> cur_;
  std::string carry_;  // a line cut by the block boundary
  void flush_entry();
};

// A signal that is itself the cause of death (SIGKILL, SIGSEGV, SIGBUS, ...),
// not SIGABRT (a process ending itself after an error it logged) or SIGTERM.
bool decisive_signal(const std::string& sig);

// Log findings about worker exits (torchelastic.*) that the console shows to
// be the agent's own SIGTERM become cascades; exits with an error code only
// say that the rank raised (its exception carries the cause) and stop voting;
// the subject rank is taken from the pid when the tables name it.
void adjust_torchrun_finding(const TorchrunConsole& c, Finding& f);

// Findings the console supports on its own: torchrun.root_cause (primary,
// rank_process_died, when the first observed failure is a death by a signal
// the agent did not send), torchrun.rank_left_early (a rank missing from the
// table while the others failed in a collective: rank_skips_collective) and
// torchrun.odd_rank_out (every other worker failed on its own and this one
// had to be stopped by the agent).
std::vector<Finding> torchrun_findings(const TorchrunConsole& c);

}  // namespace ccdiag::logs
