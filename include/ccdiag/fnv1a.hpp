// FNV-1a, 64 bit, over a sequence of strings: stable across builds, hosts and
// runs (std::hash is none of these), so it can key a database embedded at
// build time against the one the running binary would compile.
#pragma once

#include <cstdint>
#include <string_view>

namespace ccdiag {

class Fnv1a64 {
 public:
  // Adds `s` and then a separator, so ("ab","c") and ("a","bc") differ.
  void add(std::string_view s) {
    for (unsigned char c : s) mix(c);
    mix(0xff);
  }
  uint64_t value() const { return h_; }

 private:
  void mix(unsigned char c) {
    h_ ^= c;
    h_ *= 1099511628211ULL;
  }
  uint64_t h_ = 14695981039346656037ULL;
};

}  // namespace ccdiag
