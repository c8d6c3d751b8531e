// Discovery of ncclComm objects by their startMagic/endMagic pair (NCCL
// 2.21.5+): a comm is heap memory whose first and last 8 bytes are
// NCCL_MAGIC (0x0280028002800280); commPoison zeroes both before the free, so
// a freed comm no longer matches. Only scannable() mappings are read (private
// anonymous rw, [heap]); never device or shared mappings.
#pragma once

#include <chrono>
#include <functional>
#include <cstdint>
#include <vector>

#include "collectors/nccl/attach/attach_model.hpp"
#include "collectors/nccl/attach/target.hpp"

namespace ccdiag::nccl::attach {

inline constexpr uint64_t kNcclMagic = 0x0280028002800280ULL;

struct CommCandidate {
  uint64_t addr = 0;
  int64_t size = 0;  // sizeof(ncclComm) the pair matched
};

struct ScanLimits {
  uint64_t max_bytes = 64ULL << 30;                       // stop reading after this much
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// Calls `fn(base, words, n)` for every chunk (up to 1 MiB, 8-byte aligned) of
// every scannable() mapping, within `limits` (counted in `stats`).
void for_each_heap_chunk(const AttachTarget& t, const ScanLimits& limits, ScanStats& stats,
                         const std::function<void(uint64_t base, const uint64_t* words, size_t n)>& fn);

// `sizes`: candidate sizeof(ncclComm) values (one when the layout is known;
// every table size when it is not). A start magic is accepted when the same
// magic sits at addr + size - 8 for one of them; the end magic of a comm is
// itself a start candidate and is rejected that way.
std::vector<CommCandidate> scan_for_comms(const AttachTarget& t, const std::vector<int64_t>& sizes,
                                          const ScanLimits& limits, ScanStats& stats);

}  // namespace ccdiag::nccl::attach
