// Rules against evidence kinds other layers produce (rdma.*, pcie.*, host.*,
// ranks.*, stacks.*): what each field means, and that missing or mistyped
// fields make a rule skip, never guess.
#include <catch2/catch.hpp>

#include <set>

#include "analysis/tree/decision_tree.hpp"
#include "analysis/tree/log_facts.hpp"
#include "analysis/tree/rules/rules.hpp"
#include "tree_helpers.hpp"

using namespace ccdiag;
using tree_test::ev;
using tree_test::finding;

namespace {
std::vector<Hypothesis> run_rule(void (*rule)(const EvidenceSet&, std::vector<Hypothesis>&), const EvidenceSet& set) {
  std::vector<Hypothesis> out;
  rule(set, out);
  return out;
}
const Hypothesis* for_cause(const std::vector<Hypothesis>& hs, const std::string& cause) {
  for (const auto& h : hs)
    if (h.cause == cause) return &h;
  return nullptr;
}
}  // namespace

TEST_CASE("skew audit: the minority host is the outlier; a 1-1 tie names nobody and is weaker", "[tree][rules]") {
  EvidenceSet set;
  for (const char* h : {"a", "b", "c"}) set.evidence.push_back(ev("host.versions", h, {{"nccl_version", "2.21.5"}}));
  set.evidence.push_back(ev("host.versions", "d", {{"nccl_version", "2.18.3"}}));
  set.hosts = {"a", "b", "c", "d"};
  auto hs = run_rule(rules::skew_audit, set);
  const auto* h = for_cause(hs, "nccl_version_mismatch");
  REQUIRE(h);
  CHECK(h->culprit.host == "d");
  REQUIRE(h->derived);
  CHECK(h->derived->fields["majority"] == "2.21.5");

  EvidenceSet tie;
  tie.evidence.push_back(ev("net.link", "a", {{"netdev", "ens1"}, {"mtu", 9000}}));
  tie.evidence.push_back(ev("net.link", "b", {{"netdev", "ens1"}, {"mtu", 1500}}));
  tie.hosts = {"a", "b"};
  hs = run_rule(rules::skew_audit, tie);
  h = for_cause(hs, "mtu_mismatch");
  REQUIRE(h);
  CHECK_FALSE(h->culprit.host);
  CHECK(h->weight < 100);
}

TEST_CASE("skew audit: an NCCL_* variable set on some hosts and unset on others", "[tree][rules]") {
  EvidenceSet set;
  for (const char* h : {"a", "b", "c"}) {
    auto e = ev("log.nccl_env", h, {{"name", "NCCL_SOCKET_IFNAME"}, {"value", "ens3"}});
    set.evidence.push_back(e);
  }
  set.evidence.push_back(ev("log.nccl_env", "c", {{"name", "NCCL_IB_GID_INDEX"}, {"value", "0"}}));
  set.hosts = {"a", "b", "c"};
  const auto hs = run_rule(rules::skew_audit, set);
  const auto* h = for_cause(hs, "roce_gid_index_mismatch");
  REQUIRE(h);
  CHECK(h->culprit.host == "c");
}

TEST_CASE("rdma rules: port down, link_downed growth, QPs in error; wrong types are skipped", "[tree][rules]") {
  EvidenceSet set;
  // The shapes the rdma collector writes (ccdiag/evidence_kinds.hpp).
  auto down = ev("rdma.port", "n1", {{"device", "mlx5_2"}, {"port", 1}, {"state", "DOWN"}, {"phys_state", "Disabled"}});
  down.subject.nic = "mlx5_2";
  set.evidence.push_back(down);
  auto flap = ev("rdma.counters", "n2", {{"device", "mlx5_0"}, {"port", 1}, {"sampled_twice", true},
                                         {"counters", {{"link_downed", {{"t0", 5}, {"t1", 7}, {"delta", 2}}}}}});
  flap.subject.nic = "mlx5_0";
  set.evidence.push_back(flap);
  set.evidence.push_back(ev("rdma.port", "n3", {{"state", 4}}));
  set.evidence.push_back(ev("rdma.counters", "n3", {{"sampled_twice", true}, {"counters", "oops"}}));
  auto qp = ev("rdma.qp", "n4", {{"qps", {{{"device", "mlx5_1"}, {"lqpn", 16}, {"port", 1}, {"state", "RTS"}},
                                          {{"device", "mlx5_1"}, {"lqpn", 17}, {"port", 1}, {"state", "ERR"}, {"pid", 4242}}}}});
  set.evidence.push_back(qp);
  auto unavailable = ev("rdma.qp", "n5", {{"qps", {{{"state", "ERR"}}}}});
  unavailable.availability = Availability::unavailable("no RDMA netlink");
  set.evidence.push_back(unavailable);
  const auto hs = run_rule(rules::rdma_state, set);
  REQUIRE(for_cause(hs, "nic_port_down"));
  CHECK(for_cause(hs, "nic_port_down")->culprit.nic == "mlx5_2");
  REQUIRE(for_cause(hs, "nic_link_flapping"));
  CHECK(for_cause(hs, "nic_link_flapping")->weight >= 20);
  REQUIRE(for_cause(hs, "qp_error_state"));
  CHECK(for_cause(hs, "qp_error_state")->culprit.host == "n4");
  CHECK(for_cause(hs, "qp_error_state")->culprit.nic == "mlx5_1");
  CHECK(for_cause(hs, "qp_error_state")->culprit.pid == 4242);
}

TEST_CASE("pcie rules: degraded link; IOMMU and ACS argue for and against P2P blockers", "[tree][rules]") {
  EvidenceSet set;
  // The shapes the pcie collector writes: the endpoint and its path of hops.
  auto hop = [](const char* bdf, double cs, double ms, int cw, int mw) {
    return nlohmann::json{{"bdf", bdf}, {"current_link_speed_gts", cs}, {"max_link_speed_gts", ms},
                          {"current_link_width", cw}, {"max_link_width", mw}};
  };
  set.evidence.push_back(ev("pcie.link", "n1", {{"bdf", "0000:ca:00.0"}, {"role", "gpu"},
                                               {"path", {hop("0000:ca:00.0", 8, 32, 8, 16), hop("0000:c9:00.0", 32, 32, 16, 16)}}}));
  // An idle GPU at Gen1 on its own link is power saving, not a fault.
  set.evidence.push_back(ev("pcie.link", "n1", {{"bdf", "0000:3b:00.0"}, {"role", "gpu"},
                                               {"path", {hop("0000:3b:00.0", 2.5, 32, 16, 16), hop("0000:3a:00.0", 2.5, 32, 16, 16)}}}));
  set.evidence.push_back(ev("pcie.link", "n1", {{"path", "oops"}}));
  set.evidence.push_back(ev("host.iommu", "n1", {{"mode", "off"}, {"translated", false}}));
  set.evidence.push_back(ev("pcie.acs", "n1", {{"bdf", "0000:16:02.0"}, {"acs_capability", true}, {"req_redirect", true},
                                              {"acs_ctl_text", "SrcValid+ ReqRedir+ CmpltRedir+"}}));
  set.evidence.push_back(ev("pcie.acs", "n1", {{"bdf", "0000:16:03.0"}}));  // ACS unreadable (no CAP_SYS_ADMIN): no vote
  set.evidence.push_back(ev("log.peer_access", "n1", {{"from_dev", 0}, {"to_dev", 1}, {"can", true}}));
  const auto hs = run_rule(rules::pcie_state, set);
  size_t degraded = 0;
  for (const auto& h : hs) degraded += h.cause == "pcie_link_degraded";
  CHECK(degraded == 1);
  REQUIRE(for_cause(hs, "iommu_blocks_p2p"));
  CHECK(for_cause(hs, "iommu_blocks_p2p")->weight < 1);
  REQUIRE(for_cause(hs, "pcie_acs_p2p_blocked"));
  CHECK(for_cause(hs, "pcie_acs_p2p_blocked")->weight >= 10);
}

TEST_CASE("host rules: RemoveIPC cannot touch ranks that run as root or a system user", "[tree][rules]") {
  EvidenceSet set;
  set.evidence.push_back(ev("host.logind", "n1", {{"remove_ipc", true}}));
  set.evidence.push_back(ev("ranks.process", "n1", {{"rank", 0}, {"uid", 0}}));
  auto hs = run_rule(rules::host_config, set);
  REQUIRE(for_cause(hs, "removeipc_deletes_shm"));
  CHECK(for_cause(hs, "removeipc_deletes_shm")->weight < 1);
  set.evidence.push_back(ev("ranks.process", "n1", {{"rank", 1}, {"uid", 1001}}));
  hs = run_rule(rules::host_config, set);
  CHECK(for_cause(hs, "removeipc_deletes_shm")->weight > 1);
}

TEST_CASE("host rules: a loopback hostname is no evidence for a job on one host", "[tree][rules]") {
  EvidenceSet set;
  set.evidence.push_back(ev("host.resolve", "n1", {{"name", "n1"}, {"addr", "127.0.1.1"}}));
  CHECK_FALSE(for_cause(run_rule(rules::host_config, set), "hostname_resolves_to_loopback"));
  set.evidence.push_back(ev("ranks.process", "n1", {{"rank", 0}, {"world_size", 4}, {"local_world_size", 4}}));
  CHECK_FALSE(for_cause(run_rule(rules::host_config, set), "hostname_resolves_to_loopback"));
  set.evidence.push_back(ev("ranks.process", "n1", {{"rank", 1}, {"world_size", 8}, {"local_world_size", 4}}));
  REQUIRE(for_cause(run_rule(rules::host_config, set), "hostname_resolves_to_loopback"));
}

TEST_CASE("host rules: memlock, peermem, fabric manager, logind, firewall, resolution, driver mismatch", "[tree][rules]") {
  EvidenceSet set;
  // The shapes the config collector writes (ccdiag/evidence_kinds.hpp).
  set.evidence.push_back(ev("host.memlock", "n1", {{"soft", 65536}, {"hard", 65536}}));
  set.evidence.push_back(ev("host.peermem", "n1", {{"nvidia_peermem", false}, {"gdr_possible", false}, {"nvidia_gpus", 8}, {"rdma_devices", 8}}));
  set.evidence.push_back(ev("host.fabric_manager", "n1", {{"nvswitch_system", true}, {"fabric_manager_running", false}}));
  set.evidence.push_back(ev("host.logind", "n1", {{"remove_ipc", true}}));
  set.evidence.push_back(ev("host.firewall", "n1", {{"allows_ephemeral", false}, {"input_policy", "DROP"}}));
  set.evidence.push_back(ev("host.resolve", "n1", {{"name", "n1"}, {"addr", "127.0.1.1"}}));
  set.evidence.push_back(ev("host.versions", "n1", {{"driver_version", "535.1"}, {"user_driver_version", "550.5"}}));
  set.evidence.push_back(ev("host.memlock", "n2", {{"soft", true}}));  // wrong type: skipped
  // A rank of a two-node job: its peers on the other node dial the loopback name.
  set.evidence.push_back(ev("ranks.process", "n1", {{"rank", 0}, {"world_size", 16}, {"local_world_size", 8}}));
  const auto hs = run_rule(rules::host_config, set);
  for (const char* c : {"memlock_limit_too_low", "gpudirect_rdma_module_missing", "fabric_manager_not_running",
                        "removeipc_deletes_shm", "firewall_blocked_ports", "hostname_resolves_to_loopback",
                        "driver_library_mismatch"}) {
    INFO(c);
    REQUIRE(for_cause(hs, c));
    CHECK(for_cause(hs, c)->weight > 1);
    CHECK(for_cause(hs, c)->culprit.host == "n1");
  }
  size_t memlock = 0;
  for (const auto& h : hs) memlock += h.cause == "memlock_limit_too_low";
  CHECK(memlock == 1);
}

TEST_CASE("watchdog rule: silent when an error elsewhere explains the timeout", "[tree][rules]") {
  EvidenceSet set;
  auto wd = finding("log.watchdog_timeout", Layer::framework, FindingRole::symptom, {});
  set.findings.push_back(wd);
  auto hs = run_rule(rules::watchdog_without_error, set);
  REQUIRE(for_cause(hs, "rank_skips_collective"));
  set.findings.push_back(finding("kernel.xid", Layer::hardware, FindingRole::primary, {{"gpu_hung_kernel", 20}}));
  hs = run_rule(rules::watchdog_without_error, set);
  CHECK(hs.empty());
}

TEST_CASE("fr findings without supports vote by kind", "[tree][rules]") {
  EvidenceSet set;
  auto f = finding("fr.missing_ranks", Layer::framework, FindingRole::primary, {});
  f.fields = {{"kind", "missing_ranks"}, {"ranks", {5}}};
  set.findings.push_back(f);
  const auto hs = run_rule(rules::flight_recorder, set);
  REQUIRE(for_cause(hs, "rank_skips_collective"));
  CHECK(for_cause(hs, "rank_skips_collective")->culprit.rank == 5);
}

namespace {
Evidence rank_env(int rank, nlohmann::json env) {
  Evidence e = ev("ranks.process", "vm", {{"rank", rank}, {"env", std::move(env)}});
  e.subject.rank = rank;
  return e;
}
}  // namespace

TEST_CASE("skew audit: ranks of one job are compared, not the ranks of another job on the host", "[tree][rules]") {
  EvidenceSet set;
  const nlohmann::json job_a = {{"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}, {"TORCHELASTIC_RUN_ID", "a"}};
  for (int r = 0; r < 4; ++r) {
    auto env = job_a;
    env["NCCL_ALGO"] = "Ring";
    set.evidence.push_back(rank_env(r, env));
  }
  // A second job's rank 0 on the same host, without NCCL_ALGO: not a skew of job a.
  set.evidence.push_back(rank_env(0, {{"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29600"}, {"NCCL_IB_HCA", "mlx5_0"}}));
  CHECK(run_rule(rules::skew_audit, set).empty());
  // Within job a, one rank with a different algorithm is.
  auto env = job_a;
  env["NCCL_ALGO"] = "Tree";
  set.evidence[3] = rank_env(3, env);
  const auto hs = run_rule(rules::skew_audit, set);
  REQUIRE(for_cause(hs, "nccl_config_error"));
  CHECK(for_cause(hs, "nccl_config_error")->culprit.rank == 3);
}

TEST_CASE("skew audit: settings that only change NCCL's reporting are no skew", "[tree][rules]") {
  EvidenceSet set;
  for (int r = 0; r < 4; ++r)
    set.evidence.push_back(rank_env(r, r == 0 ? nlohmann::json{{"NCCL_DEBUG", "INFO"}, {"NCCL_RAS_ADDR", "127.0.0.1:44005"},
                                                                {"NCCL_PROTO", "Simple"}}
                                              : nlohmann::json{{"NCCL_PROTO", "Simple"}}));
  CHECK(run_rule(rules::skew_audit, set).empty());
}

TEST_CASE("coll rule: ranks whose COLL lines differ at one opCount issued mismatched collectives", "[tree][rules]") {
  // NCCL_DEBUG_SUBSYS=COLL lines as src/enqueue.cc prints them, one log per rank (grep -r prefixes),
  // with the init lines that give each comm pointer its rank and the shared commId.
  auto rank_log = [](int rank, const char* ptr, const char* bcast_count, const char* dtype) {
    const std::string pid = std::to_string(100 + rank);
    const std::string pfx = "rank" + std::to_string(rank) + ".log:node1:" + pid + ":" + pid + " [" +
                            std::to_string(rank) + "] NCCL INFO ";
    return pfx + "comm " + ptr + " rank " + std::to_string(rank) + " nranks 3 cudaDev " + std::to_string(rank) +
           " nvmlDev 0 busId 1000 commId 0xabc - Init COMPLETE\n" + pfx + "AllReduce: opCount 0 sendbuff 0x1 recvbuff "
           "0x1 count 1024 datatype 7 op 0 root 0 comm " + ptr + " [nranks=3] stream 0x5\n" + pfx +
           "Broadcast: opCount 1 sendbuff 0x1 recvbuff 0x1 count " + bcast_count + " datatype " + dtype +
           " op 0 root 0 comm " + ptr + " [nranks=3] stream 0x5\n";
  };
  EvidenceSet set;
  extract_log_facts(rank_log(0, "0x7f00", "53", "4"), "r0.log", "", set);
  extract_log_facts(rank_log(1, "0x7f10", "53", "4"), "r1.log", "", set);
  extract_log_facts(rank_log(2, "0x7f20", "25503912", "6"), "r2.log", "", set);
  REQUIRE(set.of_kind("log.coll_calls").size() == 3);
  CHECK(set.of_kind("log.coll_calls")[0]->data["comm"] == "0xabc");
  auto hs = run_rule(rules::coll_disagreement, set);
  REQUIRE(hs.size() == 1);
  CHECK(hs[0].cause == "mismatched_collectives");
  CHECK(hs[0].culprit.rank == 2);  // one against two: the odd rank out
  CHECK(hs[0].why.find("opCount 1") != std::string::npos);
  REQUIRE(hs[0].derived);
  CHECK(hs[0].derived->layer == Layer::framework);

  // Same calls everywhere, or point-to-point calls whose counts differ by design: nothing.
  EvidenceSet same;
  for (int r = 0; r < 3; ++r) extract_log_facts(rank_log(r, "0x7f00", "53", "4"), "r.log", "", same);
  CHECK(run_rule(rules::coll_disagreement, same).empty());
  EvidenceSet p2p;
  extract_log_facts("h:1:1 [0] NCCL INFO Send: opCount 2 sendbuff 0x1 recvbuff (nil) count 10 datatype 7 op 0 root 1 "
                    "comm 0x1 [nranks=2] stream 0x5\n", "a.log", "", p2p);
  extract_log_facts("h:2:2 [1] NCCL INFO Recv: opCount 2 sendbuff (nil) recvbuff 0x1 count 99 datatype 7 op 0 root 0 "
                    "comm 0x2 [nranks=2] stream 0x5\n", "b.log", "", p2p);
  CHECK(p2p.of_kind("log.coll_calls").size() == 2);
  CHECK(run_rule(rules::coll_disagreement, p2p).empty());
  // Two ranks of different communicators (sizes) are never compared.
  EvidenceSet other;
  extract_log_facts("h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 10 datatype 7 op 0 "
                    "root 0 comm 0x1 [nranks=2] stream 0x5\n", "a.log", "", other);
  extract_log_facts("h:2:2 [1] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 99 datatype 7 op 0 "
                    "root 0 comm 0x2 [nranks=4] stream 0x5\n", "b.log", "", other);
  CHECK(run_rule(rules::coll_disagreement, other).empty());
}

TEST_CASE("cross-host P2P rule: each node's own P2P pairs on the same GPU ordinals are no host collision",
          "[tree][rules]") {
  // Two nodes of 8 GPUs (NVIDIA/nccl#229 shape): node A logs 0[0] -> 1[1], node B logs 8[0] -> 9[1]; the
  // peers 1 and 9 never log a channel line themselves. Rank 9 on GPU 1 is no witness against node A's rank 1.
  EvidenceSet set;
  extract_log_facts("hostA:35480:35545 [0] NCCL INFO Ring 00 : 15 -> 0 [receive] via NET/AWS Libfabric/0\n"
                    "hostA:35480:35545 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] via P2P/IPC\n"
                    "hostB:26465:26533 [0] NCCL INFO Ring 00 : 7 -> 8 [receive] via NET/AWS Libfabric/0\n"
                    "hostB:26465:26533 [0] NCCL INFO Ring 00 : 8[0] -> 9[1] via P2P/IPC\n",
                    "job.log", "", set);
  CHECK(run_rule(rules::cross_host_p2p, set).empty());
  // The same edges when node B's rank 8 reaches node A's rank 1 over P2P: a collision.
  EvidenceSet bad;
  extract_log_facts("hostA:35480:35545 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] via P2P/IPC\n"
                    "hostA:35481:35546 [1] NCCL INFO Ring 00 : 1[1] -> 0[0] via P2P/IPC\n"
                    "hostB:26465:26533 [0] NCCL INFO Ring 00 : 8[0] -> 1[1] via P2P/IPC\n",
                    "job.log", "", bad);
  CHECK_FALSE(run_rule(rules::cross_host_p2p, bad).empty());
}

TEST_CASE("host identity rule: one host name that advertises two addresses on one interface is two machines",
          "[tree][rules]") {
  // NCCL 2.3's form (horovod under mpirun, both servers named node1), then 2.x's Bootstrap, NET/Socket and
  // OOB lines.
  EvidenceSet set;
  extract_log_facts("node1:18225:18239 [0] INFO NET : Using interface eth1:10.0.0.1<0>\n"
                    "node1:22671:22795 [1] INFO NET : Using interface eth1:10.0.0.2<0>\n",
                    "job.log", "", set);
  REQUIRE(set.of_kind("log.iface_addr").size() == 2);
  auto hs = run_rule(rules::one_name_two_addresses, set);
  const auto* h = for_cause(hs, "duplicate_hostname_across_nodes");
  REQUIRE(h);
  CHECK(h->culprit.host == "node1");
  REQUIRE(h->derived);
  CHECK(h->derived->summary.find("eth1") != std::string::npos);
  EvidenceSet forms;
  extract_log_facts("n:1:2 [0] NCCL INFO Bootstrap : Using eth0:<ipA><0>\n"
                    "n:3:4 [0] NCCL INFO NET/Socket : Using [0]eth1:10.1.0.1<0> [1]eth0:<ipB><0>\n"
                    "n:5:6 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth2:10.2.0.1<0>\n",
                    "job.log", "", forms);
  std::set<std::string> pairs;
  for (const auto* e : forms.of_kind("log.iface_addr"))
    pairs.insert(e->data["ifname"].get<std::string>() + "=" + e->data["addr"].get<std::string>());
  CHECK(pairs == std::set<std::string>{"eth0=<ipA>", "eth1=10.1.0.1", "eth0=<ipB>", "eth2=10.2.0.1"});
  CHECK_FALSE(run_rule(rules::one_name_two_addresses, forms).empty());  // eth0 twice, two addresses
  // One machine: the same address from every process, two interfaces with an address each, loopback,
  // two machines with their own names.
  EvidenceSet one;
  extract_log_facts("a:1:2 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
                    "a:3:4 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
                    "a:3:4 [1] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0> [1]eth1:10.0.1.1<0>\n"
                    "a:5:6 [2] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>\n"
                    "a:7:8 [3] NCCL INFO Bootstrap : Using lo:127.0.1.1<0>\n"
                    "b:1:2 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n",
                    "job.log", "", one);
  CHECK(run_rule(rules::one_name_two_addresses, one).empty());
}

TEST_CASE("store endpoint rule: a store client that failed on an explicit loopback address rules out the network",
          "[tree][rules]") {
  // The three forms torch's c10d prints (socket.cpp, TCPStore.cpp).
  EvidenceSet set;
  extract_log_facts("torch.distributed.DistNetworkError: The client socket has timed out after 20000ms while trying "
                    "to connect to (127.0.0.1, 29622).\n"
                    "[W1207 18:58:46.634953840 TCPStore.cpp:340] [c10d] TCP client failed to connect/validate to "
                    "host 10.1.2.3:29500 - retrying (try=0, timeout=20000ms, delay=11130ms)\n"
                    "[c10d] The client socket has failed to connect to [localhost]:29501 (errno: 111 - Connection "
                    "refused).\n",
                    "rank1.log", "", set);
  std::set<std::string> seen;
  for (const auto* e : set.of_kind("log.store_connect_failed"))
    seen.insert(e->data["addr"].get<std::string>() + ":" + std::to_string(e->data["port"].get<int>()));
  CHECK(seen == std::set<std::string>{"127.0.0.1:29622", "10.1.2.3:29500", "localhost:29501"});
  auto hs = run_rule(rules::store_target_local, set);
  const auto* h = for_cause(hs, "wrong_network_interface");
  REQUIRE(h);
  CHECK(h->weight < 0.25);
  CHECK(for_cause(hs, "firewall_blocked_ports"));
  // A routable address, or Debian's 127.0.1.1 (a host name mapped to loopback), says nothing of the kind.
  for (const char* addr : {"10.1.2.3", "127.0.1.1"}) {
    EvidenceSet other;
    extract_log_facts(std::string("The client socket has timed out after 900s while trying to connect to (") + addr +
                          ", 29500).\n",
                      "rank1.log", "", other);
    REQUIRE(other.of_kind("log.store_connect_failed").size() == 1);
    CHECK(run_rule(rules::store_target_local, other).empty());
  }
}

TEST_CASE("gdr rule: GPUDirect RDMA seen working argues against a missing peer-memory module", "[tree][rules]") {
  EvidenceSet set;
  extract_log_facts("h:291:3517 [1] NCCL INFO Connected all rings, use ring PXN 0 GDR 1\n"
                    "h:291:3517 [1] NCCL INFO Connected all rings, use ring PXN 0 GDR 1\n",
                    "a.log", "", set);
  REQUIRE(set.of_kind("log.gdr_in_use").size() == 1);  // once per process
  auto hs = run_rule(rules::net_without_gdr, set);
  const auto* h = for_cause(hs, "gpudirect_rdma_module_missing");
  REQUIRE(h);
  CHECK(h->weight < 1);
  // "GDR 0" is no such evidence.
  EvidenceSet off;
  extract_log_facts("h:291:3517 [1] NCCL INFO Connected all rings, use ring PXN 0 GDR 0\n", "a.log", "", off);
  CHECK(run_rule(rules::net_without_gdr, off).empty());
}

TEST_CASE("socket rule: a socket transport striped over 3+ interfaces with NCCL_SOCKET_IFNAME unset",
          "[tree][rules]") {
  std::string log;
  for (int c = 0; c < 8; ++c)
    log += "h:1050:1315 [0] NCCL INFO Channel 0" + std::to_string(c) + "/0 : 0[0] -> 1[1] [send] via NET/Socket/" +
           std::to_string(c % 4) + "\n";
  EvidenceSet set;
  extract_log_facts(log, "a.log", "", set);
  auto hs = run_rule(rules::socket_ifname, set);
  const auto* h = for_cause(hs, "wrong_network_interface");
  REQUIRE(h);
  CHECK(h->evidence_key == "socket_transport_striped");
  CHECK(h->weight < 10);  // weak: a VM may have several real NICs
  CHECK(h->why.find("4 interfaces") != std::string::npos);
  // Two interfaces (a bond pair) are no evidence, nor any number once the operator chose them.
  EvidenceSet two;
  extract_log_facts("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/Socket/0\n"
                    "h:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] [send] via NET/Socket/1\n",
                    "a.log", "", two);
  CHECK(!for_cause(run_rule(rules::socket_ifname, two), "wrong_network_interface"));
  EvidenceSet chosen;
  extract_log_facts("h:1050:1050 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth\n" + log, "a.log", "",
                    chosen);
  for (const auto& x : run_rule(rules::socket_ifname, chosen)) CHECK(x.evidence_key != "socket_transport_striped");
}
