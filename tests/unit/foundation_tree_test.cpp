// Decision-tree scoring: priors moved by likelihood ratios, honest confidence.
#include <catch2/catch.hpp>
#include <set>

#include "analysis/tree/catalogue.hpp"
#include "analysis/tree/decision_tree.hpp"

using namespace ccdiag;

namespace {
Finding xid_finding(int xid, const char* cause, double w, const char* gpu) {
  Finding f;
  f.id = "kernel.xid";
  f.layer = Layer::hardware;
  f.severity = Severity::critical;
  f.summary = "Xid " + std::to_string(xid);
  f.subject.host = "n1";
  f.subject.gpu = gpu;
  f.supports.push_back(CauseSupport{cause, w});
  return f;
}
}  // namespace

TEST_CASE("every catalogue id is unique snake_case with a layer and next steps") {
  std::set<std::string> seen;
  for (const auto& c : cause_catalogue()) {
    CHECK(seen.insert(c.id).second);
    CHECK(c.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos);
    CHECK_FALSE(c.next_steps.empty());
    CHECK(c.prior > 0.0);
    CHECK(c.prior < 0.5);
  }
  for (const char* id : {"rank_skips_collective", "gpu_fell_off_bus", "container_shm_too_small",
                         "ib_transport_retry_exceeded", "nccl_version_mismatch", "removeipc_deletes_shm"})
    CHECK(find_cause(id) != nullptr);
}

TEST_CASE("next steps fill the culprit into commands") {
  Subject s;
  s.gpu = "0000:3b:00.0";
  auto steps = next_steps_for(*find_cause("gpu_fell_off_bus"), s);
  CHECK(steps.front().command.find("0000:3b:00.0") != std::string::npos);
}

TEST_CASE("no findings and nothing checked is not health; a clean probe is") {
  EvidenceSet set;
  Report r = decide(set);
  CHECK(r.verdict.root_cause == kInsufficientEvidence);
  CHECK(r.verdict.confidence <= 0.3);
  CHECK_FALSE(r.verdict.layer.has_value());
  Evidence e;
  e.kind = "host.dev_shm";
  e.data = {{"size_bytes", 17179869184LL}};
  set.evidence.push_back(e);
  r = decide(set);
  CHECK(r.verdict.root_cause == kNoProblemFound);
  CHECK_FALSE(r.verdict.layer.has_value());
}

TEST_CASE("a decisive hardware finding gives a confident hardware verdict with its culprit") {
  EvidenceSet set;
  set.findings.push_back(xid_finding(79, "gpu_fell_off_bus", 200, "0000:3b:00.0"));
  Report r = decide(set);
  CHECK(r.verdict.root_cause == "gpu_fell_off_bus");
  CHECK(r.verdict.layer == Layer::hardware);
  CHECK(r.verdict.confidence > 0.8);
  CHECK(r.verdict.confidence < 1.0);
  CHECK(r.verdict.culprit.gpu == "0000:3b:00.0");
  CHECK_FALSE(r.next_steps.empty());
}

TEST_CASE("one weak line is not a confident verdict") {
  EvidenceSet set;
  set.findings.push_back(xid_finding(13, "gpu_hung_kernel", 3, "0000:3b:00.0"));
  Report r = decide(set);
  CHECK(r.verdict.root_cause == kInsufficientEvidence);
  CHECK(r.verdict.confidence < kMinConfidence);
  REQUIRE_FALSE(r.alternatives.empty());
  CHECK(r.alternatives.front().root_cause == "gpu_hung_kernel");
}

TEST_CASE("the same signature repeated counts once") {
  std::vector<Hypothesis> once{{"gpu_hung_kernel", {}, 20, "kernel.xid", {}, "x", {}}};
  std::vector<Hypothesis> many(50, once.front());
  CHECK(score_causes(once, 0).front().confidence == Approx(score_causes(many, 0).front().confidence));
}

TEST_CASE("two equally supported causes share the confidence") {
  std::vector<Hypothesis> h{{"gpu_hung_kernel", {}, 200, "a", {}, "x", {}},
                            {"nic_port_down", {}, 200, "b", {}, "y", {}}};
  auto s = score_causes(h, 0);
  REQUIRE(s.size() == 2);
  CHECK(s[0].confidence < 0.75);
  CHECK(s[1].confidence < 0.75);
}

TEST_CASE("unchecked probes lower confidence") {
  std::vector<Hypothesis> h{{"gpu_fell_off_bus", {}, 50, "a", {}, "x", {}}};
  CHECK(score_causes(h, 5).front().confidence < score_causes(h, 0).front().confidence);
}

TEST_CASE("cascade findings never vote") {
  EvidenceSet set;
  Finding f = xid_finding(79, "gpu_fell_off_bus", 200, "0000:3b:00.0");
  f.role = FindingRole::cascade;
  set.findings.push_back(f);
  Report r = decide(set);
  CHECK(r.verdict.root_cause == kInsufficientEvidence);
}

TEST_CASE("the chain marks the verdict's layer as explaining") {
  EvidenceSet set;
  set.findings.push_back(xid_finding(79, "gpu_fell_off_bus", 200, "0000:3b:00.0"));
  Report r = decide(set);
  bool explains = false;
  for (const auto& s : r.chain)
    if (s.layer == Layer::hardware) explains = s.outcome == StepOutcome::explains;
  CHECK(explains);
}
