// who_of reads NCCL's "host:pid:tid [dev] " prefix and the rank tags by
// hand; these hold it to the answers of the regular expressions it replaced
// (leftmost match, in the first 160 bytes, starting in the first 64).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <re2/re2.h>

#include "analysis/tree/line_who.hpp"

using namespace ccdiag;

namespace {

struct Expected {
  std::optional<size_t> prefix_start;
  std::string host, pid, tid, dev;
  std::optional<size_t> rank_start;
  std::string rank;
};

Expected by_regex(std::string_view s) {
  static const RE2 prefix(R"(([^\s:\[\]]+):(\d+):(\d+) \[(\d+)\] )");
  static const RE2 rank(R"(\[(?:rank|Rank )(\d+)\])");
  Expected e;
  re2::StringPiece sub[5];
  const re2::StringPiece in(s.data(), s.size());
  if (prefix.Match(in, 0, in.size(), RE2::UNANCHORED, sub, 5)) {
    e.prefix_start = static_cast<size_t>(sub[0].data() - s.data());
    e.host = std::string(sub[1]);
    e.pid = std::string(sub[2]);
    e.tid = std::string(sub[3]);
    e.dev = std::string(sub[4]);
  }
  if (rank.Match(in, 0, in.size(), RE2::UNANCHORED, sub, 2)) {
    e.rank_start = static_cast<size_t>(sub[0].data() - s.data());
    e.rank = std::string(sub[1]);
  }
  return e;
}

void same(std::string_view s) {
  INFO(std::string(s));
  const Expected e = by_regex(s);
  const auto p = find_nccl_prefix(s);
  REQUIRE(p.has_value() == e.prefix_start.has_value());
  if (p) {
    CHECK(p->start == *e.prefix_start);
    CHECK(p->host == e.host);
    CHECK(p->pid == e.pid);
    CHECK(p->tid == e.tid);
    CHECK(p->dev == e.dev);
  }
  // process_key_of: who_of's process, as the COLL reader keys communicators by it.
  const LineWho w = who_of(s);
  std::string key = "stale";
  process_key_of(s, key);
  CHECK(key == w.host + ":" + (w.pid ? std::to_string(*w.pid) : ""));
  const auto r = find_rank_tag(s);
  REQUIRE(r.has_value() == e.rank_start.has_value());
  if (r) {
    CHECK(r->first == *e.rank_start);
    CHECK(r->second == e.rank);
  }
}

}  // namespace

TEST_CASE("line_who: the prefixes real logs carry", "[tree][line-who]") {
  for (const char* l : {
           "node1:2212:2212 [3] NCCL INFO Bootstrap : Using ens1f0:10.12.0.7<0>",
           "[2024-05-01 10:00:00] node1:12:34 [0] NCCL INFO comm 0x1 rank 0 nranks 8",
           "[rank3]:node-7:4411:4502 [3] NCCL INFO AllReduce: opCount 3",
           "[default0]:gpu-a100-3:75:75 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB",
           "10:00:00:12:34 [0] x",
           "a:1:2 [3]",
           "a:1:2 [3] ",
           "::1:2 [3] b:3:4 [5] ",
           "x:y:1:2 [3] tail",
           "[Rank 12] Watchdog caught collective operation timeout",
           "[rank] [rank7] [Rank x] [Rank 9]",
           "[I422 23:27:07.709032 32048 ProcessGroupNCCL.cpp:2100] [PG ID 0 PG GUID 0(default_pg) Rank 48] NCCL Work",
           "",
           "host:123456789012345678901234567890:1 [0] overflowing pid",
       })
    same(l);
  const LineWho w = who_of("[rank3]:node-7:4411:4502 [3] NCCL INFO AllReduce: opCount 3");
  CHECK(w.host == "node-7");
  CHECK(w.pid == 4411);
  CHECK(w.dev == "3");
  CHECK(w.rank == 3);
  CHECK(who_of("[trainer0|5]:node1:1:1 [0] NCCL INFO x").rank == 5);
  // A pid that overflows is no pid (the line is still read).
  CHECK_FALSE(who_of("host:123456789012345678901234567890:1 [0] x").pid);
}

TEST_CASE("line_who: the same answers as the expressions on random prefix-like text", "[tree][line-who]") {
  std::mt19937 rng(7);
  const std::string alphabet = "ab:01 [] \t|Rrank9";
  for (int n = 0; n < 20000; ++n) {
    std::string s;
    const size_t len = rng() % 40;
    for (size_t i = 0; i < len; ++i) s += alphabet[rng() % alphabet.size()];
    same(s);
  }
}

TEST_CASE("line_who: the same answers on the corpus's log lines", "[tree][line-who]") {
  namespace fs = std::filesystem;
  size_t lines = 0;
  for (const auto& ent : fs::directory_iterator(fs::path(CCDIAG_SOURCE_DIR) / "tests/corpus/cases")) {
    std::ifstream in(ent.path());
    std::string l;
    while (std::getline(in, l)) {
      same(std::string_view(l).substr(0, 160));
      ++lines;
    }
  }
  CHECK(lines > 1000);
}
