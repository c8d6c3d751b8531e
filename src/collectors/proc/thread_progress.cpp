#include "collectors/proc/thread_progress.hpp"

#include <unistd.h>

#include <charconv>
#include <thread>

#include "collectors/proc/proc_parse.hpp"

namespace ccdiag {

namespace {

std::optional<uint64_t> to_u64(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  uint64_t v = 0;
  const char* b = s->data();
  while (b < s->data() + s->size() && (*b == ' ' || *b == '\t')) ++b;
  const auto [p, ec] = std::from_chars(b, s->data() + s->size(), v);
  if (ec != std::errc() || p == b) return std::nullopt;
  return v;
}

}  // namespace

std::optional<ThreadCounters> read_main_thread_counters(const SysRoot& root, int64_t pid) {
  const std::string task = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid);
  auto status = root.read_file(task + "/status", 64 << 10);
  auto stat = root.read_file(task + "/stat", 16 << 10);
  if (!status || !stat) return std::nullopt;
  const auto kv = parse_status(*status);
  const auto vol = to_u64(status_value(kv, "voluntary_ctxt_switches"));
  const auto nonvol = to_u64(status_value(kv, "nonvoluntary_ctxt_switches"));
  const auto ps = parse_proc_stat(*stat);
  if (!vol || !nonvol || !ps) return std::nullopt;
  return ThreadCounters{*vol, *nonvol, ps->utime + ps->stime};
}

std::map<int64_t, ThreadProgress> measure_main_thread_progress(const SysRoot& root, const std::vector<int64_t>& pids,
                                                              std::chrono::milliseconds window) {
  std::map<int64_t, ThreadProgress> out;
  if (pids.empty() || !root.is_live()) return out;
  std::map<int64_t, ThreadCounters> first;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t pid : pids)
    if (auto c = read_main_thread_counters(root, pid)) first.emplace(pid, *c);
  if (first.empty()) return out;
  std::this_thread::sleep_for(window);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const long hz = ::sysconf(_SC_CLK_TCK);
  for (const auto& [pid, a] : first) {
    auto b = read_main_thread_counters(root, pid);
    // A counter that went down is another process behind a reused pid.
    if (!b || b->voluntary < a.voluntary || b->nonvoluntary < a.nonvoluntary || b->cpu_ticks < a.cpu_ticks) continue;
    ThreadProgress p;
    p.window_ms = ms;
    p.wakeups = b->voluntary - a.voluntary;
    p.preemptions = b->nonvoluntary - a.nonvoluntary;
    p.cpu_ms = hz > 0 ? static_cast<double>(b->cpu_ticks - a.cpu_ticks) * 1000.0 / static_cast<double>(hz) : 0.0;
    out.emplace(pid, p);
  }
  return out;
}

}  // namespace ccdiag
