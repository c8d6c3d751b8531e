// Slow rank / link / node from per-rank timings (docs/perf.md "Profiler rings",
// "NCCL INFO logs"): the communicator and arrival analysis (coll_skew), the
// channel analysis (slow_channels) and their findings (slow_timing).
// Job: 16 processes on 4 hosts (4 GPUs each); 4 rail groups {g, g+4, g+8, g+12}
// and 4 diagonal groups, so every process is in two 4-rank communicators with
// different peers; a world communicator with 8 channels, channel c entering
// each host at GPU c%4 and leaving it at GPU (c+3)%4. Times on 4 ms ticks
// (the plugin's CLOCK_REALTIME_COARSE), as the rings carry them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "analysis/perf/coll_skew.hpp"
#include "analysis/perf/slow_channels.hpp"
#include "analysis/perf/slow_timing.hpp"

using namespace ccdiag;
using namespace ccdiag::perf;

namespace {

const std::vector<std::vector<int>> kGroups = {
    {0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15},
    {0, 5, 10, 15}, {1, 6, 11, 12}, {2, 7, 8, 13}, {3, 4, 9, 14}};

constexpr int64_t kT0 = 1796032800LL * 1000000000LL;
constexpr int64_t kTick = 4000000;

RankProcess proc(int r) { return RankProcess{"node" + std::to_string(r / 4), 4000 + r, r % 4, ""}; }
std::string key(int r) { return proc(r).key(); }
int64_t tick(int64_t t) { return t - t % kTick; }

struct Scenario {
  int slow = -1;          // its NIC: every collective and channel it is in is slower on the wire
  int late = -1;          // arrives 40 ms late (a compute straggler)
  int late_host = -1;     // every process of this host arrives 15 ms late
  double noise = 0.10;
  bool spike = false;     // one x20 sample in one communicator and one channel
  bool quantise = true;
};

TimingSet make(const Scenario& s, uint32_t seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jit(1 - s.noise, 1 + s.noise), arrive(0, 0.5);
  auto q = [&](int64_t t) { return s.quantise ? tick(t) : t; };
  auto lag = [&](int r) {
    return (r == s.late ? 40.0 : 0.0) + (r / 4 == s.late_host ? 15.0 : 0.0) + arrive(rng);
  };
  TimingSet ts;
  for (size_t g = 0; g < kGroups.size(); ++g) {
    const auto& m = kGroups[g];
    for (int k = 1; k <= 30; ++k) {
      const int64_t t = kT0 + k * 200000000LL + static_cast<int64_t>(g) * 20000000LL;
      std::vector<int64_t> arr;
      for (int r : m) arr.push_back(t + static_cast<int64_t>(lag(r) * 1e6));
      double wire = 24.0 * jit(rng) * (std::count(m.begin(), m.end(), s.slow) ? 2.5 : 1.0);
      if (s.spike && g == 6 && k == 7) wire *= 20;
      const int64_t done = *std::max_element(arr.begin(), arr.end()) + static_cast<int64_t>(wire * 1e6);
      for (size_t i = 0; i < m.size(); ++i) {
        CollTiming c;
        c.proc = proc(m[i]);
        c.comm = "0x" + std::to_string(1000 + g);
        c.comm_rank = static_cast<int>(i);
        c.nranks = 4;
        c.func = "AllReduce";
        c.seq = k;
        c.count = 262144;
        c.arrive_ns = q(arr[i]);
        c.done_ns = q(done);
        ts.colls.push_back(c);
      }
    }
  }
  // World communicator: only its channels (6 snapshots' worth of distinct ops).
  for (int k = 1; k <= 6; ++k) {
    const int64_t t = kT0 + k * 200000000LL + 180000000LL;
    std::vector<int64_t> arr(16);
    for (int r = 0; r < 16; ++r) arr[r] = t + static_cast<int64_t>(lag(r) * 1e6);
    const int64_t start = *std::max_element(arr.begin(), arr.end());
    for (int c = 0; c < 8; ++c) {
      const int e = c % 4, x = (c + 3) % 4;
      double ct = 30.0 * jit(rng) * (s.slow >= 0 && (s.slow % 4 == e || s.slow % 4 == x) ? 2.5 : 1.0);
      if (s.spike && c == 3 && k == 2) ct *= 20;
      const int64_t stop = start + static_cast<int64_t>(ct * 1e6);
      for (int h = 0; h < 4; ++h) {
        const int snd = h * 4 + x, rcv = ((h + 1) % 4) * 4 + e;
        for (bool send : {true, false}) {
          const int r = send ? snd : rcv;
          ChannelTiming ch;
          ch.proc = proc(r);
          ch.comm = "0xworld";
          ch.comm_rank = r;
          ch.nranks = 16;
          ch.channel = c;
          ch.send = send;
          ch.peer = send ? rcv : snd;
          ch.op_seq = static_cast<uint64_t>(k);
          ch.start_ns = q(arr[r]);
          ch.stop_ns = q(stop);
          ts.channels.push_back(ch);
        }
      }
    }
  }
  return ts;
}

bool any_slow(const TimingAnalysis& a) {
  return std::any_of(a.skew.comms.begin(), a.skew.comms.end(), [](const CommWire& c) { return c.slow; }) ||
         std::any_of(a.channels.channels.begin(), a.channels.channels.end(), [](const ChannelStat& c) { return c.slow; });
}

}  // namespace

TEST_CASE("rings, slow NIC: the process in every slow communicator is named, with the slow channels it is an endpoint of", "[perf-timing]") {
  Scenario s;
  s.slow = 9;
  const auto a = analyze_timings(make(s), "profiler rings", 4.0);
  REQUIRE(a.skew.culprits == std::vector<std::string>{key(9)});
  int slow = 0;
  for (const auto& c : a.skew.comms) slow += c.slow;
  CHECK(slow == 2);  // {1,5,9,13} and {3,4,9,14}
  // Channels 1, 2, 5, 6 cross the network at GPU 1 of every host: slow, but the
  // four GPU-1 processes stay uncleared (rings are alike on every host).
  std::vector<int> slow_ch;
  for (const auto& c : a.channels.channels)
    if (c.slow) slow_ch.push_back(c.channel);
  CHECK(slow_ch == std::vector<int>{1, 2, 5, 6});
  CHECK(a.channels.suspects == std::vector<std::string>{key(1), key(5), key(9), key(13)});
  CHECK(a.skew.late.empty());
  const auto f = timing_findings(a);
  REQUIRE_FALSE(f.empty());
  CHECK(f[0].id == "perf.slow_link");
  CHECK(f[0].subject.host == "node2");
  CHECK(f[0].subject.pid == 4009);
  CHECK(f[0].subject.gpu == "1");
  CHECK(f[0].summary.find("channel 1") != std::string::npos);
  REQUIRE(f[0].supports.size() == 1);
  CHECK(f[0].supports[0].cause == "slow_link_or_nic");
  CHECK(timing_problem(a));
}

TEST_CASE("rings, arrival-skew decoy: a late process makes its peers' times long but names no link and no channel", "[perf-timing]") {
  Scenario s;
  s.late = 6;
  const auto a = analyze_timings(make(s), "profiler rings", 4.0);
  CHECK(a.skew.culprits.empty());
  CHECK_FALSE(any_slow(a));
  REQUIRE(a.skew.late.size() == 1);
  CHECK(a.skew.late[0].member == key(6));
  CHECK(a.skew.late[0].fraction_late == 1.0);
  CHECK(a.skew.late[0].own_ms < a.skew.late[0].others_ms / 2);  // the late one waits least
  const auto f = timing_findings(a);
  REQUIRE(f.size() == 1);
  CHECK(f[0].id == "perf.late_arrival");
  CHECK(f[0].layer == Layer::framework);
  CHECK(f[0].supports[0].cause == "straggler_or_timeout_too_short");
}

TEST_CASE("rings, healthy noisy job with one x20 sample: nobody named", "[perf-timing]") {
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u, 6u}) {
    Scenario s;
    s.noise = 0.25;
    s.spike = true;
    const auto a = analyze_timings(make(s, seed), "profiler rings", 4.0);
    INFO("seed " << seed);
    CHECK(a.skew.culprits.empty());
    CHECK(a.skew.late.empty());
    CHECK_FALSE(any_slow(a));
    CHECK(timing_findings(a).empty());
    CHECK_FALSE(timing_problem(a));
  }
}

TEST_CASE("a slow node: every process of a host late names the host", "[perf-timing]") {
  Scenario s;
  s.late_host = 3;
  s.quantise = false;
  const auto a = analyze_timings(make(s), "NCCL INFO logs", 0.001);
  REQUIRE(a.skew.late_hosts.size() == 1);
  CHECK(a.skew.late_hosts[0].host == "node3");
  CHECK(a.skew.late.size() == 4);
  CHECK_FALSE(any_slow(a));
  const auto f = timing_findings(a);
  REQUIRE_FALSE(f.empty());
  CHECK(f[0].id == "perf.slow_host");
  // Its processes are part of the host's finding, not causes of their own.
  for (const auto& x : f)
    if (x.id == "perf.late_arrival") CHECK(x.role == FindingRole::symptom);
}

TEST_CASE("arrival lags under two clock ticks are not judged", "[perf-timing]") {
  Scenario s;
  s.late_host = 3;  // 15 ms late: under 2 s, what whole-second timestamps can show
  s.quantise = false;
  const auto a = analyze_timings(make(s), "NCCL INFO logs", 1000);
  CHECK(a.skew.late.empty());
  CHECK(std::any_of(a.notes.begin(), a.notes.end(), [](const std::string& n) { return n.find("whole seconds") != std::string::npos; }));
}

TEST_CASE("channels: a slow channel's only uncleared endpoint is its NIC; two joined by the channel are a link", "[perf-timing]") {
  // 4 channels of one communicator, ranks 0..3 on hosts a, b, c, d. Channel 0
  // crosses a->b, channel 1 c->d, channel 2 a->c, channel 3 b->d.
  auto build = [](std::vector<std::pair<int, int>> hops, std::vector<int> slow_channels) {
    std::vector<ChannelTiming> v;
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> jit(0.95, 1.05);
    for (int op = 1; op <= 6; ++op)
      for (size_t c = 0; c < hops.size(); ++c) {
        const bool slow = std::count(slow_channels.begin(), slow_channels.end(), static_cast<int>(c)) > 0;
        const int64_t dur = static_cast<int64_t>(20e6 * jit(rng) * (slow ? 3 : 1));
        for (bool send : {true, false}) {
          ChannelTiming t;
          const int r = send ? hops[c].first : hops[c].second;
          t.proc = RankProcess{std::string(1, static_cast<char>('a' + r)), 100 + r, std::nullopt, ""};
          t.comm = "0xc";
          t.comm_rank = r;
          t.channel = static_cast<int>(c);
          t.send = send;
          t.peer = send ? hops[c].second : hops[c].first;
          t.op_seq = static_cast<uint64_t>(op);
          t.start_ns = kT0 + op * 1000000000LL;
          t.stop_ns = t.start_ns + dur;
          v.push_back(t);
        }
      }
    return v;
  };
  // Channels 0 (a->b) and 2 (a->c) slow; b and c are cleared by 3 and 1: a's NIC.
  const auto nic = analyze_channels(build({{0, 1}, {2, 3}, {0, 2}, {1, 3}}, {0, 2}));
  CHECK(nic.nic_culprits == std::vector<std::string>{"a:100"});
  CHECK(nic.link_culprits.empty());
  // Only channel 0 (a->b) slow, and no other channel clears a or b: the link a->b.
  const auto link = analyze_channels(build({{0, 1}, {2, 3}, {2, 3}, {3, 2}}, {0}));
  CHECK(link.nic_culprits.empty());
  REQUIRE(link.link_culprits.size() == 1);
  CHECK(link.link_culprits[0].from == "a:100");
  CHECK(link.link_culprits[0].to == "b:101");
  // One snapshot (one op per channel): nothing is compared, and the note says how to get more.
  auto one = build({{0, 1}, {2, 3}, {0, 2}, {1, 3}}, {0, 2});
  one.erase(std::remove_if(one.begin(), one.end(), [](const ChannelTiming& t) { return t.op_seq != 1; }), one.end());
  const auto single = analyze_channels(one);
  CHECK(single.nic_culprits.empty());
  REQUIRE(single.notes.size() == 1);
  CHECK(single.notes[0].find("several snapshots") != std::string::npos);
}

TEST_CASE("a ring slot read in two snapshots is one sample", "[perf-timing]") {
  Scenario s;
  s.slow = 9;
  auto ts = make(s);
  const auto once = analyze_channels(ts.channels);
  auto twice = ts.channels;
  twice.insert(twice.end(), ts.channels.begin(), ts.channels.end());
  const auto a = analyze_channels(twice);
  CHECK(a.samples == once.samples);
  for (size_t i = 0; i < a.channels.size(); ++i) CHECK(a.channels[i].ops == once.channels[i].ops);
}
