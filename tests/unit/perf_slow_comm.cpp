// Slow link vs arrival skew from flight-recorder entries (docs/perf.md).
// 16 ranks on 4 hosts (4 GPUs each) in two families of 4-rank communicators:
// DP groups {g, g+4, g+8, g+12} and "diagonal" groups, so every rank sits in
// two communicators that overlap with different peers (the group tests).
// Timings: 20 all_reduces per communicator, wire time 4 ms with +-10 % noise.
#include <catch2/catch.hpp>

#include <random>

#include "analysis/perf/slow_comm.hpp"

using namespace ccdiag;
using namespace ccdiag::perf;

namespace {

const std::vector<std::vector<int>> kGroups = {
    {0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15},    // pg 1-4
    {0, 5, 10, 15}, {1, 6, 11, 12}, {2, 7, 8, 13}, {3, 4, 9, 14}};  // pg 5-8

struct Scenario {
  int slow_rank = -1;          // its NIC: every collective it is in is slower on the wire
  double slow_factor = 2.5;
  int late_rank = -1;          // arrives late (compute straggler)
  double late_ms = 40;
  double noise = 0.10;         // relative jitter of every timing
  bool gpu_timing = true;      // duration_ms present
  int spike_pg = -1;           // one huge outlier in one collective of this pg
};

std::vector<fr::RankDump> make(const Scenario& s, uint32_t seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jit(1.0 - s.noise, 1.0 + s.noise);
  std::vector<fr::RankDump> d(16);
  for (int r = 0; r < 16; ++r) {
    d[r].rank = r;
    d[r].host = "node" + std::to_string(r / 4);
    d[r].file = "nccl_trace_rank_" + std::to_string(r);
    fr::ShapeInfo sh;
    sh.text = "[[1048576]]";
    sh.total_numel = 1048576;
    sh.first_numel = 1048576;
    sh.count = 1;
    d[r].intern_shape(sh);
    d[r].intern_string("nccl:all_reduce");
    for (size_t g = 0; g < kGroups.size(); ++g) d[r].intern_pg(std::to_string(g + 1), "");
  }
  int64_t t = 1'000'000'000'000;
  for (int seq = 1; seq <= 20; ++seq) {
    for (size_t g = 0; g < kGroups.size(); ++g) {
      const auto& members = kGroups[g];
      bool has_slow = std::find(members.begin(), members.end(), s.slow_rank) != members.end();
      double wire = 4.0 * jit(rng) * (has_slow ? s.slow_factor : 1.0);
      if (static_cast<int>(g) + 1 == s.spike_pg && seq == 7) wire *= 20;  // one noisy sample
      std::vector<double> arrive;
      for (int r : members) arrive.push_back(jit(rng) * 0.5 + (r == s.late_rank ? s.late_ms : 0.0));
      const double last = *std::max_element(arrive.begin(), arrive.end());
      for (size_t i = 0; i < members.size(); ++i) {
        const int r = members[i];
        fr::FrEntry e;
        e.collective_seq = seq;
        e.pg = static_cast<uint32_t>(g);
        e.name = 0;
        e.in_shapes = 0;
        e.state = fr::FrState::completed;
        e.time_created_ns = t + static_cast<int64_t>(arrive[i] * 1e6);
        const double done = last + wire;
        e.time_started_ns = e.time_created_ns;
        e.time_completed_ns = t + static_cast<int64_t>(done * 1e6);
        if (s.gpu_timing) e.duration_ms = static_cast<float>(done - arrive[i]);
        d[r].entries.push_back(e);
      }
      t += 100'000'000;
    }
  }
  return d;
}

}  // namespace

TEST_CASE("slow link: the rank whose every communicator is slow is named; its peers are cleared", "[perf-fr]") {
  for (bool gpu : {true, false}) {
    Scenario s;
    s.slow_rank = 9;
    s.gpu_timing = gpu;
    const auto dumps = make(s);
    const auto a = analyze_slow_comms(dumps);
    INFO("gpu timing " << gpu);
    CHECK(a.collectives == 160);
    REQUIRE(a.culprits == std::vector<int>{9});
    int slow = 0;
    for (const auto& c : a.comms) slow += c.slow;
    CHECK(slow == 2);  // pg 2 {1,5,9,13} and pg 8 {3,4,9,14}
    const auto f = slow_comm_findings(a, dumps);
    REQUIRE_FALSE(f.empty());
    CHECK(f[0].id == "perf.slow_link");
    CHECK(f[0].subject.rank == 9);
    CHECK(f[0].subject.host == "node2");
  }
}

TEST_CASE("arrival-skew decoy: a late rank makes its peers' durations long but names no link", "[perf-fr]") {
  Scenario s;
  s.late_rank = 6;  // 40 ms late in every collective of pg 3 and pg 6
  const auto dumps = make(s);
  const auto a = analyze_slow_comms(dumps);
  CHECK(a.culprits.empty());
  for (const auto& c : a.comms) CHECK_FALSE(c.slow);
  REQUIRE(a.late.size() == 1);
  CHECK(a.late[0].rank == 6);
  CHECK(a.late[0].fraction_last == 1.0);
  CHECK(a.late[0].own_median_ms < a.late[0].others_median_ms / 5);  // the late rank waits least
  const auto f = slow_comm_findings(a, dumps);
  REQUIRE(f.size() == 1);
  CHECK(f[0].id == "perf.late_arrival");
  CHECK(f[0].role == FindingRole::symptom);
}

TEST_CASE("healthy noisy job, and one huge outlier sample, name nobody", "[perf-fr]") {
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
    Scenario s;
    s.noise = 0.25;
    s.spike_pg = 4;
    const auto a = analyze_slow_comms(make(s, seed));
    INFO("seed " << seed);
    CHECK(a.culprits.empty());
    CHECK(a.late.empty());
    for (const auto& c : a.comms) CHECK_FALSE(c.slow);
  }
}

TEST_CASE("too few comparable communicators: nothing judged, and said so", "[perf-fr]") {
  Scenario s;
  s.slow_rank = 9;
  auto dumps = make(s);
  // Keep only pg 1 and pg 2 entries: two communicators cannot be compared robustly.
  for (auto& d : dumps) {
    std::vector<fr::FrEntry> keep;
    for (const auto& e : d.entries)
      if (e.pg <= 1) keep.push_back(e);
    d.entries = keep;
  }
  const auto a = analyze_slow_comms(dumps);
  CHECK(a.culprits.empty());
  REQUIRE_FALSE(a.notes.empty());
  CHECK(a.notes[0].find("not compared") != std::string::npos);
}
