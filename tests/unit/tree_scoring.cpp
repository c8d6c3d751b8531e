// Scoring model and the decision: priors moved by likelihood ratios, shared
// mass, unchecked probes, cascades, depth preference, honest verdicts.
#include <catch2/catch.hpp>

#include "analysis/tree/catalogue.hpp"
#include "analysis/tree/decision_tree.hpp"
#include "tree_helpers.hpp"

using namespace ccdiag;
using tree_test::ev;
using tree_test::finding;

namespace {
Hypothesis hyp(const std::string& cause, double w, const std::string& key, const std::string& host = "n1") {
  Hypothesis h;
  h.cause = cause;
  h.weight = w;
  h.evidence_key = key;
  h.culprit.host = host;
  h.why = key;
  return h;
}
}  // namespace

TEST_CASE("tree: confidence is prior odds times ratios over the sum of all odds", "[tree]") {
  const double prior = find_cause("container_shm_too_small")->prior;
  const auto s = score_causes({hyp("container_shm_too_small", 60, "a")}, 0);
  REQUIRE(s.size() == 1);
  const double odds = prior / (1 - prior) * 60;
  CHECK(s[0].confidence == Approx(odds / (1 + odds)));
}

TEST_CASE("tree: one evidence key counts once however often it repeats", "[tree]") {
  const auto once = score_causes({hyp("gpu_fell_off_bus", 200, "xid79")}, 0);
  const auto twice = score_causes({hyp("gpu_fell_off_bus", 200, "xid79"), hyp("gpu_fell_off_bus", 200, "xid79")}, 0);
  CHECK(once[0].confidence == Approx(twice[0].confidence));
  const auto indep = score_causes({hyp("gpu_fell_off_bus", 200, "xid79"), hyp("gpu_fell_off_bus", 5, "aer")}, 0);
  CHECK(indep[0].confidence > once[0].confidence);
}

TEST_CASE("tree: two equally supported causes share the mass", "[tree]") {
  const auto s = score_causes({hyp("iommu_blocks_p2p", 40, "k"), hyp("pcie_acs_p2p_blocked", 40, "k")}, 0);
  REQUIRE(s.size() == 2);
  CHECK(s[0].confidence == Approx(s[1].confidence));
  CHECK(s[0].confidence < 0.4);
}

TEST_CASE("tree: unchecked probes lower confidence; unknown ids and counter-only causes are no candidates", "[tree]") {
  const auto full = score_causes({hyp("nic_port_down", 40, "p")}, 0);
  const auto partial = score_causes({hyp("nic_port_down", 40, "p")}, 5);
  CHECK(partial[0].confidence < full[0].confidence);
  CHECK(score_causes({hyp("no_such_cause", 1000, "x")}, 0).empty());
  CHECK(score_causes({hyp("mtu_mismatch", 0.1, "x")}, 0).empty());
}

TEST_CASE("tree: the culprit gathers fields from every supporting hypothesis on the same host", "[tree]") {
  auto a = hyp("unusable_hca_selected", 40, "enodev", "ctr");
  a.culprit.pid = 7;
  auto b = hyp("unusable_hca_selected", 2, "single", "ctr");
  b.culprit.nic = "mlx5_3";
  auto c = hyp("unusable_hca_selected", 3, "other-host", "elsewhere");
  c.culprit.gpu = "9";
  const auto s = score_causes({a, b, c}, 0);
  CHECK(s[0].culprit.nic == "mlx5_3");
  CHECK(s[0].culprit.pid == 7);
  CHECK_FALSE(s[0].culprit.gpu);
}

TEST_CASE("tree: cascades never vote; a cascade-only picture gives a cautious verdict", "[tree]") {
  EvidenceSet set;
  auto f = finding("nccl.socket.closed_by_peer", Layer::transport, FindingRole::cascade, {{"rank_process_died", 50}});
  f.fields["peer"] = "node9";
  set.findings.push_back(f);
  const Report r = decide(set);
  CHECK(r.verdict.root_cause == kInsufficientEvidence);
  CHECK_FALSE(r.verdict.layer);
  REQUIRE_FALSE(r.next_steps.empty());
  CHECK(r.next_steps[0].action.find("node9") != std::string::npos);
}

TEST_CASE("tree: hardware on the culprit outranks the framework symptom and cascades are labelled", "[tree]") {
  EvidenceSet set;
  set.findings.push_back(finding("kernel.xid", Layer::hardware, FindingRole::primary, {{"gpu_fell_off_bus", 200}}, "n3"));
  set.findings.push_back(finding("log.watchdog_timeout", Layer::framework, FindingRole::symptom, {}, "n1"));
  set.findings.push_back(finding("nccl.peer_closed", Layer::transport, FindingRole::cascade, {}, "n1"));
  const Report r = decide(set);
  CHECK(r.verdict.root_cause == "gpu_fell_off_bus");
  CHECK(r.verdict.culprit.host == "n3");
  REQUIRE(r.chain.size() == 5);
  CHECK(r.chain[0].layer == Layer::framework);
  CHECK(r.chain[0].note.find("symptom") != std::string::npos);
  CHECK(r.chain[3].outcome == StepOutcome::explains);
  CHECK(r.chain[2].note.find("cascade") != std::string::npos);
  bool labelled = false;
  for (const auto& f : r.findings)
    if (f.role == FindingRole::cascade) labelled = f.caused_by && f.caused_by->find("n3") != std::string::npos;
  CHECK(labelled);
}

TEST_CASE("tree: a deeper cause close in score is preferred over a framework candidate on the same host", "[tree]") {
  EvidenceSet set;
  set.findings.push_back(finding("a", Layer::framework, FindingRole::primary, {{"user_code_bug", 130}}, "n1"));
  set.findings.push_back(finding("b", Layer::hardware, FindingRole::primary, {{"gpu_ecc_or_memory_fault", 42}}, "n1"));
  const Report r = decide(set);
  CHECK(r.verdict.root_cause == "gpu_ecc_or_memory_fault");
  CHECK(r.chain[3].note.find("outranks user_code_bug") != std::string::npos);
}

TEST_CASE("tree: one ambiguous line gives insufficient_evidence with a next probe", "[tree]") {
  EvidenceSet set;
  set.findings.push_back(finding("x", Layer::transport, FindingRole::primary, {{"socket_connection_failure", 3}}));
  const Report r = decide(set);
  CHECK(r.verdict.root_cause == kInsufficientEvidence);
  CHECK(r.verdict.confidence < kMinConfidence);
  REQUIRE(!r.next_steps.empty());
  // A TCP symptom: its own connectivity test, not RDMA counters (transport
  // layer too, but they say nothing about sockets).
  CHECK(r.next_steps[0].action.find("TCP") != std::string::npos);
  for (const auto& s : r.next_steps) CHECK(s.command.find("ccdiag probe rdma") == std::string::npos);
  REQUIRE_FALSE(r.alternatives.empty());
  CHECK(r.alternatives[0].root_cause == "socket_connection_failure");
}

TEST_CASE("tree: nothing wrong gives no_problem_found; unchecked makes it less sure", "[tree]") {
  EvidenceSet set;
  set.evidence.push_back(ev("host.dev_shm", "n1", {{"size_bytes", 17179869184LL}}));
  CHECK(decide(set).verdict.root_cause == kNoProblemFound);
  const double sure = decide(set).verdict.confidence;
  set.unchecked.push_back({"NVML", UncheckedState::skipped, "libnvidia-ml.so.1 not found"});
  CHECK(decide(set).verdict.confidence < sure);
}

TEST_CASE("unchecked: the state is a field; old bundles' \"state: reason\" text is split once", "[tree][unchecked]") {
  const Unchecked old = unchecked_from_text("NVML", "skipped: libnvidia-ml.so.1 not found");
  CHECK(old.state == UncheckedState::skipped);
  CHECK(old.reason == "libnvidia-ml.so.1 not found");
  CHECK(unchecked_from_text("RAS", "timeout: no reply in 2000 ms").state == UncheckedState::timeout);
  const Unchecked plain = unchecked_from_text("x", "permission denied: needs root");
  CHECK(plain.state == UncheckedState::unavailable);
  CHECK(plain.reason == "permission denied: needs root");
  CHECK(nlohmann::json(old) == nlohmann::json{{"what", "NVML"}, {"state", "skipped"}, {"reason", "libnvidia-ml.so.1 not found"}});
  // A probe that could not look lowers a cause's confidence; hardware that is absent does not.
  EvidenceSet set;
  set.evidence.push_back(ev("host.dev_shm", "n1", {{"size_bytes", 64LL << 20}}));
  const Report none = decide(set);
  REQUIRE(none.verdict.root_cause != kNoProblemFound);
  set.unchecked.push_back({"NVML", UncheckedState::skipped, "no NVIDIA driver"});
  CHECK(decide(set).verdict.confidence == none.verdict.confidence);
  set.unchecked.push_back({"RDMA", UncheckedState::timeout, "netlink did not answer"});
  CHECK(decide(set).verdict.confidence < none.verdict.confidence);
}

TEST_CASE("tree: next steps are filled with the culprit's fields", "[tree]") {
  Subject s;
  s.host = "node7";
  s.gpu = "0,1";
  s.nic = "mlx5_2";
  auto steps = next_steps_for(*find_cause("iommu_blocks_p2p"), s);
  bool nccl_tests = false;
  for (const auto& st : steps)
    if (st.command == "CUDA_VISIBLE_DEVICES=0,1 all_reduce_perf -b 8 -e 8G -f 2 -g 2") nccl_tests = true;
  CHECK(nccl_tests);
  steps = next_steps_for(*find_cause("roce_gid_index_mismatch"), s);
  bool gids = false;
  for (const auto& st : steps) gids |= st.command == "show_gids mlx5_2";
  CHECK(gids);
  steps = next_steps_for(*find_cause("nic_port_down"), Subject{});
  for (const auto& st : steps) {
    CHECK(st.command.find('{') == std::string::npos);
    CHECK(st.action.find('{') == std::string::npos);
  }
}

TEST_CASE("tree: a weak cause clearly ahead by its own evidence is named as the leading candidate", "[tree]") {
  EvidenceSet set;
  set.findings.push_back(finding("x", Layer::nccl, FindingRole::primary, {{"net_plugin_mismatch", 4}}));
  const Report r = decide(set);
  CHECK(r.verdict.root_cause == "net_plugin_mismatch");
  CHECK(r.verdict.basis == "leading_candidate");
  CHECK(r.verdict.confidence < kMinConfidence);
  CHECK(r.verdict.confidence <= 0.3);
  REQUIRE(r.verdict.layer);
  CHECK(*r.verdict.layer == Layer::nccl);
  CHECK(r.verdict.summary.find("Leading candidate") != std::string::npos);
}

TEST_CASE("tree: no leader when two causes are close or the lead is the prior's, not the evidence's", "[tree]") {
  {
    EvidenceSet set;  // same ratio for two causes of equal prior: a tie
    set.findings.push_back(finding("x", Layer::hardware, FindingRole::primary,
                                   {{"iommu_blocks_p2p", 5}, {"pcie_acs_p2p_blocked", 5}}));
    CHECK(decide(set).verdict.root_cause == kInsufficientEvidence);
  }
  {
    EvidenceSet set;  // one weak vote (x2): not enough evidence to lead
    set.findings.push_back(finding("x", Layer::system_config, FindingRole::primary, {{"wrong_network_interface", 2}}));
    CHECK(decide(set).verdict.root_cause == kInsufficientEvidence);
  }
  {
    EvidenceSet set;  // a symptom never leads on weak evidence
    set.findings.push_back(finding("x", Layer::transport, FindingRole::primary, {{"socket_connection_failure", 4}}));
    CHECK(decide(set).verdict.root_cause == kInsufficientEvidence);
  }
}

TEST_CASE("tree: a verdict on strong evidence says so", "[tree]") {
  EvidenceSet set;
  set.findings.push_back(finding("x", Layer::hardware, FindingRole::primary, {{"gpu_fell_off_bus", 300}}));
  const Report r = decide(set);
  CHECK(r.verdict.root_cause == "gpu_fell_off_bus");
  CHECK(r.verdict.basis == "evidence");
}

TEST_CASE("tree: a configuration lead without any failure is no leading candidate", "[tree]") {
  EvidenceSet set;
  set.evidence.push_back(ev("host.dev_shm", "n1", {{"size_bytes", 64LL << 20}}));
  const Report r = decide(set);
  CHECK(r.verdict.root_cause == kInsufficientEvidence);
  CHECK(r.verdict.basis.empty());
  REQUIRE_FALSE(r.alternatives.empty());
  CHECK(r.alternatives[0].root_cause == "container_shm_too_small");
}

TEST_CASE("tree: behind a weak symptom the clear cause leads; the chain says what it explains", "[tree]") {
  EvidenceSet set;
  set.findings.push_back(finding("s", Layer::transport, FindingRole::primary, {{"bootstrap_unreachable", 12}}));
  set.findings.push_back(finding("c", Layer::system_config, FindingRole::primary, {{"gpudirect_rdma_module_missing", 6}}));
  const Report r = decide(set);
  CHECK(r.verdict.root_cause == "gpudirect_rdma_module_missing");
  CHECK(r.verdict.basis == "leading_candidate");
  bool noted = false;
  for (const auto& c : r.chain) noted |= c.note.find("explains bootstrap_unreachable") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("tree: a clear connectivity symptom with nothing deeper names the cause most often behind it", "[tree]") {
  EvidenceSet set;
  auto sym = finding("s", Layer::transport, FindingRole::primary, {{"bootstrap_unreachable", 40}});
  sym.subject.rank = 3;
  set.findings.push_back(sym);
  const Report r = decide(set);
  CHECK(r.verdict.root_cause == "wrong_network_interface");
  CHECK(r.verdict.mechanism == "bootstrap_unreachable");
  CHECK(r.verdict.basis == "leading_candidate");
  CHECK(r.verdict.confidence <= 0.3);
  CHECK(r.verdict.confidence >= 0.15);
  CHECK(r.verdict.culprit.rank == 3);
  REQUIRE_FALSE(r.alternatives.empty());
  CHECK(r.alternatives[0].root_cause == "firewall_blocked_ports");
  for (const auto& a : r.alternatives) CHECK(a.root_cause != "bootstrap_unreachable");
  // The symptom's own check is among the next steps.
  bool port_check = false;
  for (const auto& s : r.next_steps) port_check |= s.command.find("nc -vz") != std::string::npos;
  CHECK(port_check);
}

TEST_CASE("tree: evidence against the usual cause of a symptom moves the verdict to the next one", "[tree]") {
  EvidenceSet set;
  set.findings.push_back(finding("s", Layer::transport, FindingRole::primary, {{"bootstrap_unreachable", 40}}));
  set.findings.push_back(finding("ok-if", Layer::system_config, FindingRole::symptom, {{"wrong_network_interface", 0.05}}));
  const Report r = decide(set);
  CHECK(r.verdict.root_cause == "firewall_blocked_ports");
  CHECK(r.verdict.mechanism == "bootstrap_unreachable");
}

TEST_CASE("tree: a faint symptom is not decomposed", "[tree]") {
  EvidenceSet set;
  set.findings.push_back(finding("s", Layer::transport, FindingRole::primary, {{"bootstrap_unreachable", 4}}));
  const Report r = decide(set);
  CHECK(r.verdict.root_cause != "wrong_network_interface");
  CHECK(r.verdict.mechanism.empty());
}

TEST_CASE("tree: retry exceeded decomposes by fabric; a QP in error keeps its id", "[tree]") {
  // Fabric unknown: the GID index, the most common cause behind it, leads.
  EvidenceSet set;
  set.findings.push_back(finding("s", Layer::transport, FindingRole::primary,
                                 {{"ib_transport_retry_exceeded", 60}, {"nic_link_flapping", 3}, {"roce_gid_index_mismatch", 2}}));
  Report r = decide(set);
  CHECK(r.verdict.root_cause == "roce_gid_index_mismatch");
  CHECK(r.verdict.mechanism == "ib_transport_retry_exceeded");
  CHECK(r.verdict.confidence <= 0.3);
  // NCCL lists only InfiniBand HCAs: a GID index explains nothing there.
  Evidence ib;
  ib.kind = "log.net_ib";
  ib.data = {{"devices", nlohmann::json::array({{{"nic", "mlx5_0"}, {"port", 1}, {"link", "IB"}}})}};
  set.evidence.push_back(ib);
  r = decide(set);
  CHECK(r.verdict.root_cause == "nic_link_flapping");
  CHECK(r.verdict.mechanism == "ib_transport_retry_exceeded");
  // A QP in the error state is not split: its findings name what lies behind it.
  EvidenceSet qp;
  qp.findings.push_back(finding("q", Layer::transport, FindingRole::primary, {{"qp_error_state", 60}}));
  r = decide(qp);
  CHECK(r.verdict.root_cause == "qp_error_state");
  CHECK(r.verdict.mechanism.empty());
}

TEST_CASE("tree: equally strong lines of one key that name different ranks lend no culprit", "[tree]") {
  // Every rank exited with code 1 (one line each, same weight): none of them is the culprit.
  auto r0 = hyp("user_code_bug", 3, "log.rank_exited");
  r0.culprit.rank = 0;
  auto r3 = hyp("user_code_bug", 3, "log.rank_exited");
  r3.culprit.rank = 3;
  auto exc = hyp("user_code_bug", 20, "python.exception");
  exc.culprit = Subject{};  // the exception line names no rank or host
  auto s = score_causes({exc, r3, r0}, 0);
  REQUIRE(s.size() == 1);
  CHECK_FALSE(s[0].culprit.rank.has_value());
  // One rank stronger than the others: it is named.
  r0.weight = 5;
  s = score_causes({exc, r3, r0}, 0);
  REQUIRE(s.size() == 1);
  CHECK(s[0].culprit.rank == std::optional<int>(0));
  // The split key alone: the host they share, no rank.
  r0.weight = 3;
  s = score_causes({r3, r0}, 0);
  REQUIRE(s.size() == 1);
  CHECK_FALSE(s[0].culprit.rank.has_value());
  CHECK(s[0].culprit.host == std::optional<std::string>("n1"));
}
