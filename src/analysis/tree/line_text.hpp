// One log line with an index of the byte pairs it contains.
//
// The log facts and cues try a few hundred literals against every line of a
// log (the mechanism tables of log_facts.cpp and log_cues.cpp). A plain
// substring search per literal made that the cost of `diagnose --log` on a
// large log. A literal can only occur where every pair of adjacent bytes in it
// occurs, so the pairs of the line are hashed into a 4,096-bit set once and a
// literal is searched only when all of its pairs are present: most literals
// are rejected after looking at one or two bits. The answer is exact (the
// search confirms every candidate); the index only saves work.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace ccdiag {

class LineText {
 public:
  explicit LineText(std::string_view text) : text_(text) {
    for (size_t i = 0; i + 1 < text.size(); ++i) {
      set(exact_, text[i], text[i + 1]);
      set(folded_, lower(text[i]), lower(text[i + 1]));
    }
  }
  LineText(const LineText&) = delete;
  LineText& operator=(const LineText&) = delete;

  std::string_view text() const { return text_; }

  // Whether `needle` occurs in the line.
  bool has(std::string_view needle) const {
    for (size_t i = 0; i + 1 < needle.size(); ++i)
      if (!test(exact_, needle[i], needle[i + 1])) return false;
    return text_.find(needle) != std::string_view::npos;
  }

  // Whether `needle` (lower-case ASCII) occurs in the line, ASCII case folded.
  bool has_ci(std::string_view needle) const {
    for (size_t i = 0; i + 1 < needle.size(); ++i)
      if (!test(folded_, needle[i], needle[i + 1])) return false;
    if (needle.empty()) return true;
    for (size_t i = 0; i + needle.size() <= text_.size(); ++i) {
      size_t k = 0;
      while (k < needle.size() && lower(text_[i + k]) == needle[k]) ++k;
      if (k == needle.size()) return true;
    }
    return false;
  }

 private:
  using Bits = std::array<uint64_t, 64>;  // 4,096 bits: a 200-byte line fills ~5%

  static char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + ('a' - 'A')) : c; }
  static uint32_t slot(char a, char b) {
    const uint32_t pair = (static_cast<uint32_t>(static_cast<unsigned char>(a)) << 8) | static_cast<unsigned char>(b);
    return (pair * 2654435761u) >> 20;  // Fibonacci hashing to 12 bits
  }
  static void set(Bits& bits, char a, char b) {
    const uint32_t s = slot(a, b);
    bits[s >> 6] |= uint64_t{1} << (s & 63);
  }
  static bool test(const Bits& bits, char a, char b) {
    const uint32_t s = slot(a, b);
    return (bits[s >> 6] >> (s & 63)) & 1;
  }

  std::string_view text_;
  Bits exact_{};
  Bits folded_{};
};

}  // namespace ccdiag
