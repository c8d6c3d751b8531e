// Test driver (never shipped): captures PID's stacks the way `ccdiag stacks`
// does, in a probe child, with the capture told to SIGKILL itself at PHASE
// ("seized", "interrupted", "stopped", "copied", "detaching"). It proves the
// target survives a tool killed at any point of the capture
// (tests/live/test_stacks_safety.py). The option is set here, not read from the
// environment of the shipped binary.
// Usage: capture_kill_driver PID PHASE
// Exit: 0 the capture completed, 2 the capture child died (expected), 1 usage.
#include <cstdlib>
#include <iostream>

#include "collectors/stacks/stacks.hpp"
#include "sys/probe_runner.hpp"

int main(int argc, char** argv) {
  using namespace ccdiag;
  if (argc != 3) {
    std::cerr << "usage: capture_kill_driver PID PHASE\n";
    return 1;
  }
  const int64_t pid = std::strtoll(argv[1], nullptr, 10);
  StacksOptions so;
  so.capture.kill_self_at = argv[2];
  const SysRoot root;
  const auto outcomes = run_probes_isolated({ProbeSpec{"stacks", std::chrono::milliseconds(10000), [&] {
                                                         auto r = collect_process_stacks(root, pid, so);
                                                         return nlohmann::json{{"ok", static_cast<bool>(r)}};
                                                       }}});
  if (!outcomes[0].availability.is_ok()) {
    std::cout << "capture child died: " << outcomes[0].availability.reason << "\n";
    return 2;
  }
  std::cout << "capture completed\n";
  return 0;
}
