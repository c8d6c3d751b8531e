#include "collectors/nccl/attach/comm_scan.hpp"

#include <algorithm>
#include <cstring>

namespace ccdiag::nccl::attach {

void for_each_heap_word(const AttachTarget& t, const ScanLimits& limits, ScanStats& stats,
                        const std::function<void(uint64_t, uint64_t)>& fn) {
  constexpr size_t kChunk = 1 << 20;
  std::vector<uint8_t> buf(kChunk);
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
      const size_t got = mem.read(a, buf.data(), want);
      stats.bytes_scanned += got;
      for (size_t off = (8 - a % 8) % 8; off + 8 <= got; off += 8) {
        uint64_t v;
        std::memcpy(&v, buf.data() + off, 8);
        fn(a + off, v);
      }
      if (got < want) {
        // A hole (not dumped, truncated core, page gone): skip to the next page.
        const uint64_t next = (a + got + 4096) & ~uint64_t(4095);
        stats.bytes_skipped += std::min(next, m.end) - (a + got);
        a = next;
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
  const MemoryReader& mem = *t.memory;
  for_each_heap_word(t, limits, stats, [&](uint64_t addr, uint64_t v) {
    // Comms are malloc'd: 16-byte aligned.
    if (v != kNcclMagic || addr % 16 != 0) return;
    ++stats.magic_hits;
    for (int64_t s : sizes) {
      uint64_t e = 0;
      if (s >= 16 && mem.read_exact(addr + static_cast<uint64_t>(s) - 8, &e, 8) && e == kNcclMagic) {
        out.push_back({addr, s});
        return;
      }
    }
    ++stats.no_end_magic;
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
