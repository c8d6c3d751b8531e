// The run's deadline: process start + --timeout. Scans of untrusted input
// that have no per-probe budget of their own (a core file in `nccl attach
// --core`, a tarball's extraction) stop there instead of running unbounded:
// README promises that --timeout bounds a run.
#pragma once

#include <chrono>

namespace ccdiag {

// main() binds the parsed --timeout value; until then the deadline is far away.
void bind_run_timeout(const double* seconds);

std::chrono::steady_clock::time_point run_deadline();

// True once the deadline has passed.
bool run_deadline_passed();

}  // namespace ccdiag
