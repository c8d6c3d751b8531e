#include "sys/run_deadline.hpp"

#include <atomic>

namespace ccdiag {

namespace {
const auto g_start = std::chrono::steady_clock::now();
std::atomic<const double*> g_seconds{nullptr};
}  // namespace

void bind_run_timeout(const double* seconds) { g_seconds.store(seconds); }

std::chrono::steady_clock::time_point run_deadline() {
  const double* s = g_seconds.load();
  if (!s || !(*s > 0)) return std::chrono::steady_clock::time_point::max();
  return g_start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(*s));
}

bool run_deadline_passed() { return std::chrono::steady_clock::now() > run_deadline(); }

}  // namespace ccdiag
