// A congested NIC among many from rdma.counters evidence sampled twice (docs/perf.md "RDMA counters").
// 4 hosts x 8 NDR ports, 10 s window; port_xmit_wait of a busy healthy fabric ~2e5/s +-40 %.
#include <catch2/catch.hpp>

#include <random>

#include "analysis/perf/rdma_counters.hpp"

using namespace ccdiag;
using namespace ccdiag::perf;

namespace {

Evidence port(const std::string& host, int nic, int64_t xmit_wait, bool twice = true, int64_t rcv_errors = 0) {
  Evidence e;
  e.kind = "rdma.counters";
  e.subject.host = host;
  e.subject.nic = "mlx5_" + std::to_string(nic);
  e.subject.port = 1;
  e.data = {{"device", "mlx5_" + std::to_string(nic)}, {"port", 1}, {"interval_s", 10.0}, {"sampled_twice", twice}};
  if (twice)
    e.data["counters"] = {{"port_xmit_wait", {{"t0", 1000}, {"t1", 1000 + xmit_wait}, {"delta", xmit_wait}, {"class", "congestion"}}},
                          {"port_rcv_errors", {{"t0", 3}, {"t1", 3 + rcv_errors}, {"delta", rcv_errors}, {"class", "signal"}}},
                          {"port_xmit_data", {{"t0", 0}, {"t1", 1 << 30}, {"delta", 1 << 30}, {"class", "data_words"}}}};
  return e;
}

std::vector<Evidence> fleet(int hot_host, int hot_nic, double factor, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jit(0.6, 1.4);
  std::vector<Evidence> v;
  for (int h = 0; h < 4; ++h)
    for (int n = 0; n < 8; ++n) {
      const bool hot = h == hot_host && n == hot_nic;
      v.push_back(port("node" + std::to_string(h), n, static_cast<int64_t>(2e6 * jit(rng) * (hot ? factor : 1.0)), true, hot ? 12 : 0));
    }
  return v;
}

}  // namespace

TEST_CASE("rdma counters: the port whose xmit_wait rate stands out is named, with what grew", "[perf-rdma]") {
  const auto a = analyze_rdma_counters(fleet(2, 3, 8.0, 1));
  REQUIRE(a.ports.size() == 32);
  int congested = 0;
  for (const auto& p : a.ports) congested += p.congested;
  CHECK(congested == 1);
  const auto f = rdma_counter_findings(a);
  REQUIRE(f.size() == 1);
  CHECK(f[0].id == "perf.nic_congested");
  CHECK(f[0].subject.host == "node2");
  CHECK(f[0].subject.nic == "mlx5_3");
  CHECK(f[0].summary.find("port_rcv_errors +12") != std::string::npos);
  CHECK(f[0].supports[0].cause == "slow_link_or_nic");
}

TEST_CASE("rdma counters: a busy healthy fabric, an idle one and a 1.3x port name nobody", "[perf-rdma]") {
  for (uint32_t seed : {1u, 2u, 3u, 4u}) {
    INFO("seed " << seed);
    CHECK(rdma_counter_findings(analyze_rdma_counters(fleet(-1, -1, 1, seed))).empty());
    CHECK(rdma_counter_findings(analyze_rdma_counters(fleet(1, 1, 1.3, seed))).empty());
  }
  // Idle: a few thousand ticks on one port among zeros is under min_rate.
  std::vector<Evidence> idle;
  for (int n = 0; n < 8; ++n) idle.push_back(port("node0", n, n == 5 ? 40000 : 0));
  CHECK(rdma_counter_findings(analyze_rdma_counters(idle)).empty());
}

TEST_CASE("rdma counters: ports read once are not compared, and said so", "[perf-rdma]") {
  std::vector<Evidence> once;
  for (int n = 0; n < 8; ++n) once.push_back(port("node0", n, 0, false));
  const auto a = analyze_rdma_counters(once);
  CHECK(a.ports.empty());
  CHECK(a.single_sample == 8);
  REQUIRE(a.notes.size() == 1);
  CHECK(a.notes[0].find("sampled twice") != std::string::npos);
}
