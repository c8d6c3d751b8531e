// contains_any (text_scan.hpp) against the plain search it replaces: every
// needle looked for with memmem, on random text with needles planted at every
// offset near the block's ends and the vector loops' strides.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ccdiag/text_scan.hpp"

using ccdiag::contains;
using ccdiag::contains_any;
using ccdiag::contains_any_sse2;

namespace {

bool plain_any(std::string_view hay, const std::vector<std::string_view>& needles) {
  for (auto n : needles)
    if (contains(hay, n)) return true;
  return false;
}

}  // namespace

TEST_CASE("contains_any finds a planted needle at every offset, and nothing where none is", "[text-scan]") {
  const std::vector<std::string_view> markers = {"closing signal", "Failures:", "Root Cause"};
  // Text made of the needles' own bytes, so first/last-byte candidates are frequent.
  const std::string alphabet = "closing ailures:RootCause Fx\n";
  uint64_t rng = 0x2545F4914F6CDD1Dull;
  auto next = [&rng]() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  size_t found = 0;
  for (size_t len : {0, 1, 8, 9, 15, 16, 31, 32, 33, 47, 63, 64, 65, 100, 257, 1000}) {
    for (int round = 0; round < 40; ++round) {
      std::string hay(len, ' ');
      for (auto& c : hay) c = alphabet[next() % alphabet.size()];
      CHECK(contains_any(hay, markers.data(), markers.size()) == plain_any(hay, markers));
      CHECK(contains_any_sse2(hay, markers.data(), markers.size()) == plain_any(hay, markers));
      // Plant one needle at an offset (all of them, for the short ones).
      const auto& n = markers[next() % markers.size()];
      if (len < n.size()) continue;
      for (size_t at = 0; at + n.size() <= len; at += (len > 80 ? 1 + next() % 7 : 1)) {
        std::string planted = hay;
        planted.replace(at, n.size(), n);
        const bool got = contains_any(planted, markers.data(), markers.size());
        CHECK(got);
        CHECK(contains_any_sse2(planted, markers.data(), markers.size()));
        found += got;
      }
    }
  }
  CHECK(found > 1000);
  // One byte short of a needle is not a match (first and last byte equal, middle not).
  const std::string near = std::string(70, '.') + "Root Cbuse" + std::string(70, '.');
  CHECK_FALSE(contains_any(near, markers.data(), markers.size()));
  CHECK_FALSE(contains_any_sse2(near, markers.data(), markers.size()));
}

TEST_CASE("contains_any: short needles, many needles, empty text", "[text-scan]") {
  const std::vector<std::string_view> two = {"ab", "zz"};
  CHECK(contains_any(std::string(100, 'x') + "ab", two.data(), two.size()));
  CHECK_FALSE(contains_any(std::string(100, 'a'), two.data(), two.size()));
  // A one-byte needle or more than 8 needles: searched one by one, same answer.
  const std::vector<std::string_view> one = {"q"};
  CHECK(contains_any("xxxxqxxxx", one.data(), one.size()));
  std::vector<std::string_view> many = {"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "b0"};
  CHECK(contains_any(std::string(200, '-') + "b0", many.data(), many.size()));
  CHECK_FALSE(contains_any(std::string(200, '-'), many.data(), many.size()));
  CHECK_FALSE(contains_any("", two.data(), two.size()));
  CHECK_FALSE(contains_any("abc", two.data(), 0));
}
