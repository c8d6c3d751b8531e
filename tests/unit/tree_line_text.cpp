// LineText answers exactly what a substring search answers: its pair index
// only decides when to skip the search. Checked against std::string_view::find
// (and a folded copy for has_ci) on random lines over a small alphabet, where
// hash collisions and near-misses are frequent, and on real log lines.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "analysis/tree/line_text.hpp"

using namespace ccdiag;

namespace {

std::string folded(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

}  // namespace

TEST_CASE("LineText::has and has_ci agree with a plain search", "[tree][line_text]") {
  std::mt19937 rng(12345);
  const std::string alphabet = "abAB :-\x80\xff";
  auto random_text = [&](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += alphabet[rng() % alphabet.size()];
    return s;
  };
  size_t present = 0;
  for (int round = 0; round < 4000; ++round) {
    const std::string line = random_text(rng() % 300);
    const std::string needle = random_text(rng() % 7);
    const LineText lt(line);
    const bool expect = line.find(needle) != std::string::npos;
    present += expect;
    REQUIRE(lt.has(needle) == expect);
    const std::string lower = folded(needle);
    REQUIRE(lt.has_ci(lower) == (folded(line).find(lower) != std::string::npos));
  }
  CHECK(present > 500);  // both answers were exercised
}

TEST_CASE("LineText on real NCCL lines", "[tree][line_text]") {
  const LineText lt("gpu-node-03:30026:30238 [2] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer "
                    "10.1.0.7<50411> with status=12 opcode=0 len=0 vendor err 129 (Send) hca mlx5_2");
  CHECK(lt.has("NCCL WARN"));
  CHECK(lt.has("status=12"));
  CHECK(lt.has("mlx5_2"));
  CHECK_FALSE(lt.has("status=13"));
  CHECK_FALSE(lt.has("NCCL INFO"));
  CHECK(lt.has_ci("got completion"));
  CHECK_FALSE(lt.has_ci("timed out"));
  CHECK(lt.has(""));
  CHECK(LineText("").has(""));
  CHECK_FALSE(LineText("").has("x"));
  CHECK_FALSE(LineText("x").has("xy"));
}
