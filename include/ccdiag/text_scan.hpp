// Byte-level text helpers shared by the log readers. The whole-block scans
// are what is done to every byte of a multi-gigabyte log: no byte-at-a-time
// loops there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace ccdiag {

// '\n' bytes in [p, p + n), eight at a time (SWAR: a zero byte of x ^ 0x0a..0a
// sets that byte's top bit of the mask, without carries between bytes).
inline size_t count_newlines(const char* p, size_t n) {
  size_t count = 0, i = 0;
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kNl = kOnes * '\n', kLow7 = 0x7f7f7f7f7f7f7f7fULL;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    const uint64_t x = w ^ kNl;
    const uint64_t zero = ~(((x & kLow7) + kLow7) | x | kLow7);
    count += static_cast<size_t>(((zero >> 7) * kOnes) >> 56);  // sum of the 0/1 bytes
  }
  for (; i < n; ++i) count += p[i] == '\n';
  return count;
}

// Whether `needle` occurs in `hay`: glibc's memmem, not string_view::find,
// whose memchr on the needle's first byte stops at every common letter.
inline bool contains(std::string_view hay, std::string_view needle) {
  return memmem(hay.data(), hay.size(), needle.data(), needle.size()) != nullptr;
}

// Whether any of `needles` (each at least 2 bytes; at most 8) occurs in
// `hay`, in one pass over it: 16 (SSE2) or 32 (AVX2) positions at a time are
// tested for each needle's first and last byte together, and only where both
// match is the rest compared. For the few rare markers a whole 4 MiB block is
// searched for (torchrun's console table), ~3x faster than a memmem each.
bool contains_any(std::string_view hay, const std::string_view* needles, size_t count);
// The same on the SSE2 path whatever the CPU has (where AVX2 is present
// contains_any takes that one; this keeps the other one checkable).
bool contains_any_sse2(std::string_view hay, const std::string_view* needles, size_t count);

// `s` without the spaces, tabs and carriage returns at either end.
inline std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace ccdiag
