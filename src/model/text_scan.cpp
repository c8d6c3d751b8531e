// contains_any (text_scan.hpp): the first-and-last-byte filter of a substring
// search, for several needles in one pass (Muła's "SIMD-friendly algorithms
// for substring searching"), with an AVX2 variant picked at run time.
#include "ccdiag/text_scan.hpp"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ccdiag {

namespace {

constexpr size_t kMaxNeedles = 8;

// Whether needle k occurs at hay[pos]: its first and last bytes have matched.
bool middle_matches(std::string_view hay, size_t pos, std::string_view n) {
  return n.size() <= 2 || std::memcmp(hay.data() + pos + 1, n.data() + 1, n.size() - 2) == 0;
}

// The positions [from, hay.size() - longest + 1) are left to the vector loops;
// the rest (and any hay too short for them) is searched by memmem.
bool tail_contains(std::string_view hay, size_t from, const std::string_view* needles, size_t count) {
  for (size_t k = 0; k < count; ++k) {
    if (from >= hay.size()) break;
    if (contains(hay.substr(from), needles[k])) return true;
  }
  return false;
}

#if defined(__x86_64__)
bool scan_sse2(std::string_view hay, const std::string_view* needles, size_t count, size_t longest,
               size_t& done) {
  __m128i first[kMaxNeedles], last[kMaxNeedles];
  for (size_t k = 0; k < count; ++k) {
    first[k] = _mm_set1_epi8(needles[k].front());
    last[k] = _mm_set1_epi8(needles[k].back());
  }
  const char* p = hay.data();
  size_t i = 0;
  // Every load stays inside hay: the last byte read is i + 15 + longest - 1.
  for (; i + 16 + longest - 1 <= hay.size(); i += 16) {
    for (size_t k = 0; k < count; ++k) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + needles[k].size() - 1));
      unsigned mask = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, first[k]), _mm_cmpeq_epi8(b, last[k]))));
      while (mask) {
        const unsigned bit = static_cast<unsigned>(__builtin_ctz(mask));
        if (middle_matches(hay, i + bit, needles[k])) return true;
        mask &= mask - 1;
      }
    }
  }
  done = i;
  return false;
}

__attribute__((target("avx2"))) bool scan_avx2(std::string_view hay, const std::string_view* needles,
                                               size_t count, size_t longest, size_t& done) {
  __m256i first[kMaxNeedles], last[kMaxNeedles];
  for (size_t k = 0; k < count; ++k) {
    first[k] = _mm256_set1_epi8(needles[k].front());
    last[k] = _mm256_set1_epi8(needles[k].back());
  }
  const char* p = hay.data();
  size_t i = 0;
  for (; i + 32 + longest - 1 <= hay.size(); i += 32) {
    for (size_t k = 0; k < count; ++k) {
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + needles[k].size() - 1));
      unsigned mask = static_cast<unsigned>(_mm256_movemask_epi8(
          _mm256_and_si256(_mm256_cmpeq_epi8(a, first[k]), _mm256_cmpeq_epi8(b, last[k]))));
      while (mask) {
        const unsigned bit = static_cast<unsigned>(__builtin_ctz(mask));
        if (middle_matches(hay, i + bit, needles[k])) return true;
        mask &= mask - 1;
      }
    }
  }
  done = i;
  return false;
}

bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

}  // namespace

namespace {

bool contains_any_with(bool avx2, std::string_view hay, const std::string_view* needles, size_t count) {
  size_t longest = 0;
  bool usable = count <= kMaxNeedles;
  for (size_t k = 0; k < count; ++k) {
    if (needles[k].size() < 2) usable = false;
    longest = std::max(longest, needles[k].size());
  }
  if (!usable) {
    for (size_t k = 0; k < count; ++k)
      if (contains(hay, needles[k])) return true;
    return false;
  }
  size_t done = 0;
#if defined(__x86_64__)
  if (avx2 ? scan_avx2(hay, needles, count, longest, done) : scan_sse2(hay, needles, count, longest, done))
    return true;
#else
  (void)avx2;
#endif
  return tail_contains(hay, done, needles, count);
}

}  // namespace

bool contains_any(std::string_view hay, const std::string_view* needles, size_t count) {
#if defined(__x86_64__)
  return contains_any_with(have_avx2(), hay, needles, count);
#else
  return contains_any_with(false, hay, needles, count);
#endif
}

bool contains_any_sse2(std::string_view hay, const std::string_view* needles, size_t count) {
  return contains_any_with(false, hay, needles, count);
}

}  // namespace ccdiag
