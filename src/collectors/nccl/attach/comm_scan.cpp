#include "collectors/nccl/attach/comm_scan.hpp"

#include <algorithm>
#include <cstring>

namespace ccdiag::nccl::attach {

std::vector<CommCandidate> scan_for_comms(const AttachTarget& t, const std::vector<int64_t>& sizes,
                                          const ScanLimits& limits, ScanStats& stats) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  std::vector<CommCandidate> out;
  constexpr size_t kChunk = 1 << 20;
  std::vector<uint8_t> buf(kChunk);
  const MemoryReader& mem = *t.memory;
  auto end_magic_size = [&](uint64_t addr) -> int64_t {
    for (int64_t s : sizes) {
      uint64_t v = 0;
      if (s >= 16 && mem.read_exact(addr + static_cast<uint64_t>(s) - 8, &v, 8) && v == kNcclMagic) return s;
    }
    return 0;
  };
  for (const auto& m : t.maps) {
    if (!scannable(m)) continue;
    ++stats.regions;
    for (uint64_t a = m.start; a < m.end;) {
      if (stats.bytes_scanned >= limits.max_bytes || clock::now() > limits.deadline) {
        stats.budget_exceeded = true;
        stats.bytes_skipped += m.end - a;
        a = m.end;
        break;
      }
      const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, m.end - a));
      const size_t got = mem.read(a, buf.data(), want);
      stats.bytes_scanned += got;
      // Comms are malloc'd: 16-byte aligned.
      for (size_t off = (16 - a % 16) % 16; off + 8 <= got; off += 16) {
        uint64_t v;
        std::memcpy(&v, buf.data() + off, 8);
        if (v != kNcclMagic) continue;
        ++stats.magic_hits;
        const uint64_t addr = a + off;
        if (int64_t s = end_magic_size(addr)) {
          out.push_back({addr, s});
        } else {
          ++stats.no_end_magic;
        }
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
  // A comm's end magic can look like the start of another one when two comms
  // are adjacent; keep candidates that do not start inside an earlier comm.
  std::sort(out.begin(), out.end(), [](const CommCandidate& x, const CommCandidate& y) { return x.addr < y.addr; });
  std::vector<CommCandidate> keep;
  for (const auto& c : out)
    if (keep.empty() || c.addr >= keep.back().addr + static_cast<uint64_t>(keep.back().size)) keep.push_back(c);
  stats.ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  return keep;
}

}  // namespace ccdiag::nccl::attach
