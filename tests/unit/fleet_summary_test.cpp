#include <catch2/catch.hpp>

#include "analysis/fleet/fleet_summary.hpp"

using namespace ccdiag;

namespace {
Evidence ev(std::string kind, std::string host, nlohmann::json data) {
  Evidence e;
  e.kind = std::move(kind);
  e.subject.host = host;
  e.data = std::move(data);
  return e;
}
}  // namespace

TEST_CASE("absent evidence stays unset; present evidence is summarised", "[fleet]") {
  EvidenceSet set;
  auto h = summarize_host("n1", "b/n1", nlohmann::json::object(), set);
  CHECK_FALSE(h.summary.hw.gpus);
  CHECK_FALSE(h.summary.hw.nic_ports);
  CHECK(h.summary.nccl_version.empty());

  // The shapes the rdma and pcie collectors write (ccdiag/evidence_kinds.hpp).
  set.evidence.push_back(ev("rdma.port", "n1", {{"device", "mlx5_0"}, {"port", 1}, {"state", "ACTIVE"}}));
  set.evidence.back().subject.nic = "mlx5_0";
  set.evidence.back().subject.port = 1;
  set.evidence.push_back(ev("rdma.port", "n1", {{"device", "mlx5_1"}, {"port", 1}, {"state", "DOWN"}}));
  set.evidence.back().subject.nic = "mlx5_1";
  set.evidence.back().subject.port = 1;
  set.evidence.push_back(ev("rdma.counters", "n1", {{"device", "mlx5_1"}, {"port", 1}, {"sampled_twice", true},
                                                    {"counters", {{"link_downed", {{"t0", 1}, {"t1", 4}, {"delta", 3}}},
                                                                  {"port_rcv_data", {{"t0", 0}, {"t1", 1000}, {"delta", 1000}}}}}}));
  set.evidence.push_back(ev("pcie.link", "n1", {{"bdf", "0000:17:00.0"}, {"role", "nic"},
                                               {"path", {{{"bdf", "0000:17:00.0"}, {"current_link_width", 8}, {"max_link_width", 16}},
                                                         {{"bdf", "0000:16:00.0"}, {"current_link_width", 16}, {"max_link_width", 16}}}}}));
  auto h2 = summarize_host("n1", "b/n1", nlohmann::json::object(), set);
  CHECK(*h2.summary.hw.nic_ports == 2);
  CHECK(*h2.summary.hw.nic_ports_active == 1);
  CHECK(*h2.summary.hw.ib_error_increase == 3);  // data counters are not errors
  CHECK(*h2.summary.hw.pcie_downtrained == 1);
}

TEST_CASE("sequence picture: front, behind, missing", "[fleet]") {
  FleetInput in;
  for (int r = 0; r < 4; ++r) {
    if (r == 2) continue;  // never reported
    HostContribution c;
    c.summary.host = "h" + std::to_string(r);
    RankProgress p;
    p.process_group = "0";
    p.rank = r;
    p.host = c.summary.host;
    p.group_size = 4;
    p.last_started = r == 3 ? 10 : 11;
    p.last_completed = 10;
    c.progress.push_back(p);
    in.add(std::move(c));
  }
  auto s = summarize_fleet(in);
  REQUIRE(s.sequences.size() == 1);
  const auto& sp = s.sequences[0];
  CHECK(sp.group_size == 4);
  CHECK(sp.front == 11);
  CHECK(sp.at_front == 2);
  CHECK(sp.rows[2].state == RankState::missing);
  CHECK(sp.rows[3].state == RankState::behind);
  CHECK(sp.rows[3].behind_by == 1);
}

TEST_CASE("census groups by main-thread signature; the small group is odd", "[fleet]") {
  nlohmann::json waiting = {{"threads", {{{"role", "main"}, {"frames", {{{"function", "poll+0x1a"}}, {{"function", "ncclProxy"}}}}}}}};
  nlohmann::json odd = {{"threads", {{{"role", "main"}, {"frames", {{{"function", "pthread_cond_wait"}}, {{"function", "DataLoader"}}}}}}}};
  CHECK(stack_signature(waiting) == "poll < ncclProxy");
  FleetInput in;
  for (int r = 0; r < 5; ++r) {
    HostContribution c;
    c.summary.host = "h";
    c.stacks.push_back(RankStack{r, 100 + r, "h", stack_signature(r == 4 ? odd : waiting)});
    in.add(std::move(c));
  }
  auto s = summarize_fleet(in);
  REQUIRE(s.census.size() == 2);
  CHECK(s.census[0].ranks.size() == 4);
  CHECK_FALSE(s.census[0].odd);
  CHECK(s.census[1].odd);
  CHECK(s.census[1].ranks == std::vector<int>{4});
}

TEST_CASE("compaction bounds per-host evidence and findings", "[fleet]") {
  EvidenceSet set;
  nlohmann::json big = {{"rank", 3}, {"threads", nlohmann::json::array()}};
  for (int i = 0; i < 2000; ++i) big["threads"].push_back({{"tid", i}, {"name", "worker-thread-name"}});
  set.evidence.push_back(ev("stacks.process", "h", big));
  for (int i = 0; i < 40; ++i) {
    Finding f;
    f.id = "kernel.xid";
    set.findings.push_back(f);
  }
  CHECK(compact_host_set(set, 16384, 16) == 24);
  CHECK(set.findings.size() == 16);
  CHECK(set.findings[0].fields["repeated"] == 24);
  CHECK(set.evidence[0].data["rank"] == 3);
  CHECK(set.evidence[0].data["truncated_by_analyze"] == true);
  CHECK_FALSE(set.evidence[0].data.contains("threads"));
}
