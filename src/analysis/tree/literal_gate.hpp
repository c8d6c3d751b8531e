// Which entries of a table of line tests can match a line at all.
//
// The log facts and cues test a few hundred table entries (signals, text
// cues) against every line of a log. Each entry needs one of a few literals
// before anything else about it can hold ("any" needles, or the first of its
// "all" needles). The gate puts every such literal into one Hyperscan literal
// database and scans the line once: an entry is tried only when one of its
// literals occurs. Exact by construction (an entry skipped here would have
// failed its own test); without Hyperscan every entry is tried.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace ccdiag {

class LiteralGate {
 public:
  // needles[i]: the literals one of which entry i needs; an empty list (or one
  // holding an empty literal) means entry i is always tried. Compiling the
  // database costs a few milliseconds, more than a small log's whole read, so
  // it is compiled on the compile_after-th line; before, every entry is tried.
  explicit LiteralGate(const std::vector<std::vector<std::string_view>>& needles, uint64_t compile_after = 4096);
  ~LiteralGate();
  LiteralGate(const LiteralGate&) = delete;
  LiteralGate& operator=(const LiteralGate&) = delete;

  // The entries worth trying on `line`, as a bit set (bit i: entry i). Safe
  // to call from several threads at once (one scratch space per thread).
  void candidates(std::string_view line, std::vector<uint64_t>& bits) const;

  static bool test(const std::vector<uint64_t>& bits, size_t i) { return (bits[i >> 6] >> (i & 63)) & 1; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ccdiag
