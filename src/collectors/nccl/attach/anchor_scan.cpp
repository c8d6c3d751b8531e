#include "collectors/nccl/attach/anchor_scan.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "sys/tracee.hpp"

namespace ccdiag::nccl::attach {

namespace {

template <class T>
std::optional<T> rd(const AttachTarget& t, uint64_t addr) {
  T v{};
  if (addr == 0 || !t.memory->read_exact(addr, &v, sizeof v)) return std::nullopt;
  return v;
}

}  // namespace

std::vector<uint64_t> find_comms_by_thread_anchor(const AttachTarget& t, const NcclLayout& l,
                                                  const ScanLimits& limits, ScanStats& stats) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<uint64_t> out;
  std::unordered_set<uint64_t> fs;
  for (const auto& th : t.threads)
    if (th.fs_base && *th.fs_base) fs.insert(*th.fs_base);
  const auto ps_progress = l.get("ncclProxyState.progressState");
  const auto pps_thread = l.get("ncclProxyProgressState.thread");
  const auto ps_thread = l.get("ncclProxyState.thread");
  const auto tp_rank = l.get("ncclProxyState.tpRank");
  const auto tp_nranks = l.get("ncclProxyState.tpnRanks");
  const auto comm_ps = l.get("ncclComm.proxyState");
  if (fs.empty() || !ps_progress || !pps_thread || !comm_ps || !tp_rank || !tp_nranks) return out;

  // Pass 1: proxy states that name one of our threads.
  std::set<uint64_t> states;
  auto consider = [&](uint64_t ps) {
    auto r = rd<int32_t>(t, ps + static_cast<uint64_t>(*tp_rank));
    auto n = rd<int32_t>(t, ps + static_cast<uint64_t>(*tp_nranks));
    if (r && n && *n >= 1 && *n <= (1 << 20) && *r >= 0 && *r < *n) states.insert(ps);
  };
  uint64_t lo = UINT64_MAX, hi = 0;
  for (uint64_t f : fs) lo = std::min(lo, f), hi = std::max(hi, f);
  for_each_heap_chunk(t, limits, stats, [&](uint64_t base, const uint64_t* w, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      if (w[i] < lo || w[i] > hi || !fs.count(w[i])) continue;
      const uint64_t addr = base + i * 8;
      consider(addr - static_cast<uint64_t>(*pps_thread) - static_cast<uint64_t>(*ps_progress));
      if (ps_thread) consider(addr - static_cast<uint64_t>(*ps_thread));
    }
  });
  if (states.empty()) return out;

  // Pass 2: comms pointing at one of them.
  std::set<uint64_t> comms;
  const uint64_t slo = *states.begin(), shi = *states.rbegin();
  for_each_heap_chunk(t, limits, stats, [&](uint64_t base, const uint64_t* w, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      if (w[i] < slo || w[i] > shi || !states.count(w[i])) continue;
      const uint64_t addr = base + i * 8;
      if (addr >= static_cast<uint64_t>(*comm_ps)) comms.insert(addr - static_cast<uint64_t>(*comm_ps));
    }
  });
  for (uint64_t c : comms) {
    auto shared = l.get("ncclComm.sharedRes") ? rd<uint64_t>(t, c + static_cast<uint64_t>(*l.get("ncclComm.sharedRes")))
                                              : std::nullopt;
    if (!shared || !*shared) continue;
    auto owner = l.get("ncclSharedResources.owner") ? rd<uint64_t>(t, *shared + static_cast<uint64_t>(*l.get("ncclSharedResources.owner")))
                                                    : std::nullopt;
    auto ps = rd<uint64_t>(t, c + static_cast<uint64_t>(*comm_ps));
    auto sps = l.get("ncclSharedResources.proxyState")
                   ? rd<uint64_t>(t, *shared + static_cast<uint64_t>(*l.get("ncclSharedResources.proxyState")))
                   : std::nullopt;
    if ((owner && *owner == c) || (ps && sps && *ps == *sps)) out.push_back(c);
  }
  stats.ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

Result<int> fill_live_thread_pointers(AttachTarget& t) {
  CaptureInput in;
  in.pid = t.pid;
  for (const auto& th : t.threads) {
    in.tids.push_back(th.tid);
    in.states.push_back('S');
  }
  CaptureOptions o;
  o.window_bytes = 0;
  auto cap = capture_process(in, o);
  if (!cap) return cap.error();
  int n = 0;
  for (const auto& c : cap->threads) {
    if (!c.have_regs || !c.regs.thread_pointer) continue;
    for (auto& th : t.threads)
      if (th.tid == c.tid) {
        th.fs_base = c.regs.thread_pointer;
        ++n;
      }
  }
  return n;
}

}  // namespace ccdiag::nccl::attach
