#include "collectors/nccl/attach/comm_scan.hpp"

#include <algorithm>
#include <cstring>
#include <set>

namespace ccdiag::nccl::attach {

void for_each_heap_chunk(const AttachTarget& t, const ScanLimits& limits, ScanStats& stats,
                         const std::function<void(uint64_t, const uint64_t*, size_t)>& fn) {
  constexpr size_t kChunk = 1 << 20;
  std::vector<uint64_t> buf(kChunk / 8);
  const MemoryReader& mem = *t.memory;
  for (const auto& m : t.maps) {
    if (!scannable(m)) continue;
    ++stats.regions;
    for (uint64_t a = m.start; a < m.end;) {
      if (stats.bytes_scanned >= limits.max_bytes || std::chrono::steady_clock::now() > limits.deadline) {
        stats.budget_exceeded = true;
        stats.bytes_skipped += m.end - a;
        break;
      }
      const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, m.end - a));
      // Mappings are page aligned, so every chunk starts 8-byte aligned.
      const size_t got = mem.read(a, buf.data(), want);
      stats.bytes_scanned += got;
      if (got >= 8) fn(a, buf.data(), got / 8);
      if (got < want) {
        // A hole (not dumped, truncated core, page gone): skip to the next
        // page, or past the whole hole when the reader knows where it ends.
        const uint64_t here = a + got;
        uint64_t next = std::max<uint64_t>((here + 4096) & ~uint64_t(4095), mem.next_readable(here));
        if (next <= here) next = m.end;  // wrapped past 2^64: nothing more here
        stats.bytes_skipped += std::min(next, m.end) - here;
        a = std::min(next, m.end);
      } else {
        a += got;
      }
    }
  }
}

std::vector<CommCandidate> scan_for_comms(const AttachTarget& t, const std::vector<int64_t>& sizes,
                                          const ScanLimits& limits, ScanStats& stats) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<CommCandidate> out;
  std::set<uint64_t> seen;
  const MemoryReader& mem = *t.memory;
  auto end_size = [&](uint64_t addr) -> int64_t {
    for (int64_t s : sizes) {
      uint64_t e = 0;
      if (s >= 16 && mem.read_exact(addr + static_cast<uint64_t>(s) - 8, &e, 8) && e == kNcclMagic) return s;
    }
    return 0;
  };
  // Fast path first: a comm of 2.22+ (>= 215 KB) is usually a chunk of its
  // own: glibc mmaps it (user pointer = mapping start + 0x10), jemalloc and
  // tcmalloc put it on a page boundary. These two words per mapping are
  // checked before the full scan, so a budget cut on a rank with tens of GB
  // of heap still finds them.
  for (const auto& m : t.maps) {
    if (!scannable(m)) continue;
    for (uint64_t a : {m.start + 0x10, m.start}) {
      uint64_t v = 0;
      if (a + 8 > m.end || !mem.read_exact(a, &v, 8) || v != kNcclMagic) continue;
      if (int64_t s = end_size(a); s && seen.insert(a).second) out.push_back({a, s});
    }
  }
  for_each_heap_chunk(t, limits, stats, [&](uint64_t base, const uint64_t* w, size_t n) {
    // Comms are malloc'd: 16-byte aligned (base is page aligned: even words).
    for (size_t i = 0; i < n; i += 2) {
      if (w[i] != kNcclMagic) continue;
      const uint64_t addr = base + i * 8;
      ++stats.magic_hits;
      if (int64_t s = end_size(addr)) {
        if (seen.insert(addr).second) out.push_back({addr, s});
        continue;
      }
      ++stats.no_end_magic;
    }
  });
  // A comm's end magic can look like the start of another one when two comms
  // are adjacent; keep candidates that do not start inside an earlier comm.
  std::sort(out.begin(), out.end(), [](const CommCandidate& x, const CommCandidate& y) { return x.addr < y.addr; });
  std::vector<CommCandidate> keep;
  for (const auto& c : out)
    if (keep.empty() || c.addr >= keep.back().addr + static_cast<uint64_t>(keep.back().size)) keep.push_back(c);
  stats.ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return keep;
}

}  // namespace ccdiag::nccl::attach
