#include "collectors/python/line_table.hpp"

namespace ccdiag::python {

int line_for_offset_310(std::string_view t, int firstlineno, int64_t addrq) {
  if (addrq < 0) return firstlineno;
  int64_t line = firstlineno, end = 0, ar_line = -1;
  size_t i = 0;
  while (end <= addrq) {
    int64_t start = 0;
    // Zero-length ranges only carry big line deltas: fold them into the next.
    do {
      if (i + 1 >= t.size()) return -1;
      start = end;
      end += static_cast<uint8_t>(t[i]);
      const int d = static_cast<int8_t>(t[i + 1]);
      i += 2;
      if (d == -128) {
        ar_line = -1;
      } else {
        line += d;
        ar_line = line;
      }
    } while (start == end);
  }
  if (ar_line > INT32_MAX || ar_line < 0) return -1;
  return static_cast<int>(ar_line);
}

namespace {

// 6-bit groups, least significant first, bit 6 = more follows.
uint64_t read_varint(std::string_view t, size_t& p) {
  uint64_t v = 0;
  unsigned shift = 0;
  while (p < t.size()) {
    const uint8_t b = static_cast<uint8_t>(t[p++]);
    if (shift < 64) v |= static_cast<uint64_t>(b & 63) << shift;
    shift += 6;
    if (!(b & 64)) break;
  }
  return v;
}

int64_t read_svarint(std::string_view t, size_t& p) {
  const uint64_t u = read_varint(t, p);
  const int64_t mag = static_cast<int64_t>(u >> 1);
  return (u & 1) ? -mag : mag;
}

}  // namespace

int line_for_offset_311(std::string_view t, int firstlineno, int64_t addrq) {
  if (addrq < 0) return firstlineno;
  int64_t line = firstlineno, end = 0, ar_line = -1;
  size_t p = 0;
  while (end <= addrq) {
    if (p >= t.size()) return -1;
    const uint8_t b = static_cast<uint8_t>(t[p]);
    // A continuation byte where an entry should start: not a location table.
    if (!(b & 0x80)) return -1;
    const int code = (b >> 3) & 15;
    const int n = (b & 7) + 1;
    int64_t delta = 0;
    if (code == 13 || code == 14) {
      size_t q = p + 1;
      delta = read_svarint(t, q);
    } else if (code >= 10 && code <= 12) {
      delta = code - 10;
    }
    // A hostile table can carry deltas near 2^62: overflow means garbage.
    if (__builtin_add_overflow(line, delta, &line)) return -1;
    ar_line = code == 15 ? -1 : line;
    end += 2 * n;  // n <= 8 per entry, entries <= t.size(): no overflow
    ++p;
    while (p < t.size() && !(static_cast<uint8_t>(t[p]) & 0x80)) ++p;
  }
  // Real lines are >= 0; a garbage table can compute anything: "no line".
  if (ar_line > INT32_MAX || ar_line < 0) return -1;
  return static_cast<int>(ar_line);
}

}  // namespace ccdiag::python
