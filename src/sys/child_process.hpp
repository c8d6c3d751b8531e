// Running an external program (a launcher: pdsh, clush, srun, kubectl) with
// its stdout and stderr read line by line as they arrive, under a deadline.
// The child gets /dev/null as stdin and its own process group, so on the
// deadline the whole group (the launcher and its ssh children) is sent
// SIGTERM, then SIGKILL after `kill_grace`. Lines longer than kMaxLine are
// cut (the rest of the line is dropped and counted).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ccdiag/result.hpp"

namespace ccdiag {

struct ChildResult {
  int exit_code = -1;       // when it exited
  int signal = 0;           // when it was killed by a signal
  bool timed_out = false;   // we killed it at the deadline
  size_t cut_lines = 0;
};

struct ChildSpec {
  std::vector<std::string> argv;                          // argv[0] looked up in PATH
  std::vector<std::pair<std::string, std::string>> env;   // added to the environment
  std::chrono::milliseconds deadline{600000};
  std::chrono::milliseconds kill_grace{5000};
};

using LineHandler = std::function<void(std::string_view)>;

inline constexpr size_t kMaxLine = 1 << 20;

// Error only when the program cannot be started (not found, fork failed).
Result<ChildResult> run_child(const ChildSpec& spec, const LineHandler& on_stdout, const LineHandler& on_stderr);

// Whether `name` resolves to an executable (a path, or a name found in PATH).
bool program_exists(const std::string& name);

}  // namespace ccdiag
