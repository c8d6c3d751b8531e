// Probe runner: every collector runs under a deadline (docs/architecture.md,
// Bounded probes: ccdiag never hangs). Collectors that can block inside
// foreign code (NVML, CUDA, ptrace on a task in D state, a read on a hung
// filesystem or a FIFO) run in a forked child; the parent waits on a pipe
// with poll() and SIGKILLs the child at the deadline. The child sends its
// result as JSON over the pipe.
//
// Ownership: the child is always reaped (no zombies), also on timeout.
// Failure modes: timeout -> Availability::timeout; child crash or bad JSON ->
// Availability::error with the signal or parse error.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/evidence.hpp"
#include "ccdiag/result.hpp"

namespace ccdiag {

struct ProbeOutcome {
  Availability availability;               // ok, timeout or error
  nlohmann::json value;                    // what the probe returned when ok
  std::string text;                        // what a text probe returned when ok
  std::chrono::milliseconds elapsed{0};
};

// Runs `probe` in a forked child and returns its JSON result, or timeout/error.
// `probe` must only compute and return: it runs in a copy of this process after
// fork(), so it must not rely on other threads of the parent.
ProbeOutcome run_probe_isolated(const std::string& name, std::chrono::milliseconds deadline,
                                const std::function<nlohmann::json()>& probe);

struct ProbeSpec {
  std::string name;
  std::chrono::milliseconds deadline;
  std::function<nlohmann::json()> probe;
  // Instead of `probe`: a result that is already text (a command's whole
  // output) crosses the pipe as bytes, not as a JSON string escaped by the
  // child and parsed back by the parent (for a 0.25 MB stacks output, ms).
  // Its outcome: `text` when it returned one; an error it returned comes back
  // as an ok outcome whose `value` is {"error": message}, as a JSON probe's.
  std::function<Result<std::string>()> text_probe = {};
};

// Runs every probe in its own child at once and waits for all of them, each
// killed at its own deadline: the whole call takes about the longest deadline,
// not their sum. Results are in the order of `specs`.
// `on_wait`, when set, is called about five times a second while probes run,
// with the names of those still running and the time left before the last
// deadline (live diagnose's progress line).
using ProbeWaitCallback = std::function<void(const std::vector<std::string>& running, std::chrono::milliseconds left)>;
std::vector<ProbeOutcome> run_probes_isolated(const std::vector<ProbeSpec>& specs, const ProbeWaitCallback& on_wait = {});

// A wall-clock budget shared by several probes: each gets min(its own limit,
// what is left), so the whole run ends within --timeout.
class Deadline {
 public:
  explicit Deadline(std::chrono::milliseconds total);
  std::chrono::milliseconds remaining() const;
  std::chrono::milliseconds slice(std::chrono::milliseconds want) const;
  bool expired() const { return remaining().count() <= 0; }

 private:
  std::chrono::steady_clock::time_point end_;
};

}  // namespace ccdiag
