// torchrun's console on real outputs (fixtures/torch/*/console.log, torch
// 2.15 + gloo): the agent's SIGTERMs are cascades, the root cause block is
// used only when it is a death by signal, the odd rank out after a timeout.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "analysis/tree/decision_tree.hpp"
#include "collectors/logs/analyzer.hpp"
#include "collectors/logs/torchrun_console.hpp"

using namespace ccdiag;
using namespace ccdiag::logs;

namespace {

std::string slurp(const std::string& scenario) {
  std::ifstream in(std::string(CCDIAG_FIXTURES) + "/torch/" + scenario + "/console.log", std::ios::binary);
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TorchrunConsole parse(const std::string& text, size_t block = 1 << 20) {
  TorchrunConsoleParser p;
  p.begin_file("console.log");
  for (size_t i = 0; i < text.size(); i += block) p.feed_block(std::string_view(text).substr(i, block));
  p.begin_file({});
  return p.result();
}

LogAnalysis analyse(const std::string& scenario) {
  auto a = LogAnalyzer::create(builtin_signatures());
  REQUIRE(a);
  (*a)->add_text(slurp(scenario), "console.log", "");
  return (*a)->finish();
}

std::vector<const Finding*> voting(const LogAnalysis& a) {
  std::vector<const Finding*> v;
  for (const auto& f : a.findings)
    if (f.role != FindingRole::cascade && f.role != FindingRole::context && !f.supports.empty()) v.push_back(&f);
  return v;
}

}  // namespace

TEST_CASE("torchrun console: SIGKILLed rank is the root cause, the agent's SIGTERMs are not", "[torchrun]") {
  const std::string text = slurp("sigkill");
  for (size_t block : {size_t{1} << 20, size_t{97}}) {  // also with tables cut across blocks
    const auto c = parse(text, block);
    REQUIRE(c.failures.size() == 4);
    CHECK(c.agent_terminated.size() == 3);
    const auto* rc = c.root_cause();
    REQUIRE(rc);
    CHECK(rc->rank == 2);
    CHECK(rc->signal == "SIGKILL");
    CHECK(rc->exitcode == -9);
  }
  const auto a = analyse("sigkill");
  REQUIRE(a.first_failure);
  const Finding& first = a.findings[*a.first_failure];
  CHECK(first.id == "torchrun.root_cause");
  CHECK(first.subject.rank == 2);
  // Every vote for a dead process names rank 2; the SIGTERMed ranks 0, 1, 3 never vote.
  bool died = false;
  for (const auto* f : voting(a)) {
    for (const auto& s : f->supports)
      if (s.cause == "rank_process_died") {
        died = true;
        CHECK(f->subject.rank == 2);
      }
  }
  CHECK(died);
  for (const auto& f : a.findings)
    if (f.id == "torchelastic.signal" && f.subject.rank != 2) CHECK(f.role == FindingRole::cascade);
}

TEST_CASE("torchrun console: after a timeout the rank the agent had to stop is the odd one out", "[torchrun]") {
  const auto c = parse(slurp("skip"));
  const auto* rc = c.root_cause();
  REQUIRE(rc);
  CHECK(rc->rank == 1);  // the first to raise: a victim
  CHECK(rc->exitcode == 1);
  const auto a = analyse("skip");
  const Finding* odd = nullptr;
  for (const auto& f : a.findings) {
    if (f.id == "torchrun.odd_rank_out") odd = &f;
    if (f.id == "torchrun.root_cause") CHECK(f.role == FindingRole::context);  // exit code 1 does not vote
  }
  REQUIRE(odd);
  CHECK(odd->subject.rank == 2);
  CHECK(odd->role == FindingRole::primary);
  // The gloo timeouts on ranks 0, 1, 3 are recognised as such, not as a user bug.
  size_t timeouts = 0;
  for (const auto& f : a.findings) {
    if (f.id == "gloo.timeout") ++timeouts;
    CHECK(f.id != "python.exception");
  }
  CHECK(timeouts >= 1);
  for (const auto* f : voting(a))
    for (const auto& s : f->supports) CHECK(s.cause != "user_code_bug");
}

TEST_CASE("torchrun console: a rank missing from the failure table left the job early", "[torchrun]") {
  // Rank 2 ran one all_reduce fewer and exited 0; ranks 1 and 3 saw it close
  // its gloo connection, rank 0 was stopped by the agent while it still
  // waited. torchrun's Root Cause names rank 1 and its table lists 0, 1, 3.
  const auto c = parse(slurp("early_exit"));
  const auto* rc = c.root_cause();
  REQUIRE(rc);
  CHECK(rc->rank == 1);
  const auto a = analyse("early_exit");
  const Finding* left = nullptr;
  for (const auto& f : a.findings) {
    if (f.id == "torchrun.rank_left_early") left = &f;
    // The worker the agent stopped was a bystander, not the odd one out.
    CHECK(f.id != "torchrun.odd_rank_out");
  }
  REQUIRE(left);
  CHECK(left->subject.rank == 2);
  CHECK(left->role == FindingRole::primary);
  bool skips = false;
  for (const auto* f : voting(a))
    for (const auto& s : f->supports) {
      if (s.cause == "rank_skips_collective") skips = true;
      // Nothing votes for another rank as the culprit.
      if (s.cause == "rank_skips_collective" || s.cause == "rank_stuck_in_host_code") CHECK(f->subject.rank == 2);
    }
  CHECK(skips);
}

TEST_CASE("torchrun console: the others gave up in init_process_group waiting for rank 2's gloo key",
          "[torchrun]") {
  // Rank 2 slept before init_process_group; ranks 0, 1, 3 timed out in the
  // store waiting for "/default_pg/0//cpu//0/2" and raised DistStoreError.
  auto a = LogAnalyzer::create(builtin_signatures());
  REQUIRE(a);
  (*a)->add_text(slurp("late_init"), "console.log", "");
  auto analysis = (*a)->finish();
  EvidenceSet set;
  for (auto& f : analysis.findings) set.findings.push_back(f);
  const Report r = decide(set);
  CHECK(r.verdict.root_cause == "straggler_or_timeout_too_short");
  CHECK(r.verdict.culprit.rank == 2);
}

TEST_CASE("torchrun console: no rank left early when the table lists every rank", "[torchrun]") {
  for (const char* scenario : {"skip", "sigkill", "size_mismatch", "dataloader_dies", "late_init"}) {
    INFO(scenario);
    const auto a = analyse(scenario);
    for (const auto& f : a.findings) CHECK(f.id != "torchrun.rank_left_early");
  }
}

TEST_CASE("torchrun console: SIGABRT after gloo::EnforceNotMet is a mismatch, not a death", "[torchrun]") {
  const auto a = analyse("size_mismatch");
  const Finding* mismatch = nullptr;
  for (const auto& f : a.findings) {
    if (f.id == "gloo.enforce.size_mismatch") mismatch = &f;
    if (f.id == "torchrun.root_cause") {
      CHECK(f.subject.rank == 1);
      CHECK(f.fields["signal"] == "SIGABRT");
      for (const auto& s : f.supports) CHECK(s.weight < 5);
    }
  }
  REQUIRE(mismatch);
  REQUIRE(!mismatch->supports.empty());
  CHECK(mismatch->supports.front().cause == "mismatched_collectives");
  CHECK(mismatch->fields["received"].dump().find("1024") != std::string::npos);
}

TEST_CASE("torchrun console: a rank that raised while the agent stopped all others is the first failure",
          "[torchrun]") {
  // dataloader_dies: rank 2's DataLoader worker was SIGKILLed, rank 2 raised
  // and exited 1; nobody timed out; the agent stopped ranks 0, 1, 3.
  const auto c = parse(slurp("dataloader_dies"));
  const auto* rc = c.root_cause();
  REQUIRE(rc);
  CHECK(rc->rank == 2);
  CHECK(rc->exitcode == 1);
  CHECK(c.agent_terminated.size() == 3);
  const auto a = analyse("dataloader_dies");
  REQUIRE(a.first_failure);
  const Finding& first = a.findings[*a.first_failure];
  CHECK(first.id == "torchrun.root_cause");
  CHECK(first.subject.rank == 2);
  CHECK(first.fields.value("decisive", false));
  bool exception = false;
  for (const auto& f : a.findings)
    if (f.id == "python.exception" && f.summary.find("DataLoader worker") != std::string::npos) {
      exception = true;
      CHECK(f.subject.rank == 2);
    }
  CHECK(exception);
  for (const auto* f : voting(a))
    for (const auto& s : f->supports) CHECK(s.cause != "rank_process_died");
}

TEST_CASE("torchrun console: nothing without a console", "[torchrun]") {
  const auto c = parse("[rank0]: loss 0.5\nepoch 1 done\nFailures are fine in prose\n");
  CHECK(c.empty());
  CHECK(torchrun_findings(c).empty());
}

TEST_CASE("torchrun console: when every rank timed out, the one the agent stopped is no odd one out", "[torchrun]") {
  // A deadlock (p2p recv before send, two groups waiting on each other):
  // every rank logs a collective timeout; three raise and exit 1 and the
  // agent stops the fourth, still unwinding its own timeout. It was in the
  // collective like the others (a CI run once blamed it).
  TorchrunConsole c;
  for (int r = 0; r < 4; ++r) {
    TorchrunFailure f;
    f.rank = r;
    f.local_rank = r;
    f.pid = 18702 + r;
    if (r == 0) {
      f.exitcode = -15;
      f.signal = "SIGTERM";
      c.agent_terminated.insert(*f.pid);
    } else {
      f.exitcode = 1;
    }
    f.root_cause = r == 1;
    c.failures.push_back(f);
    c.timed_out.insert(r);
    c.collective_failed.insert(r);
    c.known_ranks.insert(r);
  }
  for (const auto& f : torchrun_findings(c)) CHECK(f.id != "torchrun.odd_rank_out");
  // The same table with rank 0 silent (no timeout of its own) still names it.
  c.timed_out.erase(0);
  bool odd = false;
  for (const auto& f : torchrun_findings(c))
    if (f.id == "torchrun.odd_rank_out") {
      odd = true;
      CHECK(f.subject.rank == 0);
    }
  CHECK(odd);
}

TEST_CASE("torchrun console: no silent rank when the others timed out in different calls", "[torchrun]") {
  // A point-to-point deadlock (p2p_deadlock): ranks 2 and 3 time out in a
  // recv, rank 1 in the all_reduce after it, and rank 0's own timeout line was
  // cut off by the agent's SIGTERM. Rank 0 is no odd one out: the others did
  // not all give up in one collective.
  TorchrunConsole c;
  for (int r = 0; r < 4; ++r) {
    TorchrunFailure f;
    f.rank = r;
    f.pid = 31295 + r;
    f.exitcode = r == 0 ? -15 : 1;
    if (r == 0) {
      f.signal = "SIGTERM";
      c.agent_terminated.insert(*f.pid);
    }
    f.root_cause = r == 1;
    c.failures.push_back(f);
    c.known_ranks.insert(r);
    if (r > 0) {
      c.timed_out.insert(r);
      c.collective_failed.insert(r);
    }
  }
  c.timed_out_call = {{1, "all_reduce"}, {2, "recv"}, {3, "recv"}};
  for (const auto& f : torchrun_findings(c)) CHECK(f.id != "torchrun.odd_rank_out");
  // All three in the same collective (NCCL's OpType or gloo's call, either
  // spelling): rank 0 is the one that was not there.
  c.timed_out_call = {{1, "all_reduce"}, {2, "ALLREDUCE"}, {3, "all_reduce"}};
  bool odd = false;
  for (const auto& f : torchrun_findings(c))
    if (f.id == "torchrun.odd_rank_out") odd = f.subject.rank == 0;
  CHECK(odd);
}

TEST_CASE("log analyser: a gloo timeout carries the torch.distributed call its traceback ran through", "[torchrun]") {
  auto a = LogAnalyzer::create(builtin_signatures());
  REQUIRE(a);
  (*a)->add_text(
      "[rank2]:   File \"/v/lib/python3.11/site-packages/torch/distributed/c10d_logger.py\", line 83, in wrapper\n"
      "[rank1]:   File \"/v/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py\", line 4181, in "
      "all_reduce\n"
      "[rank2]:   File \"/v/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py\", line 3697, in recv\n"
      "[rank2]:     work.wait()\n"
      "[rank1]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed "
      "out waiting 40000ms for recv operation to complete\n"
      "[rank2]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed "
      "out waiting 40000ms for recv operation to complete\n",
      "console.log", "");
  const LogAnalysis r = (*a)->finish();
  std::map<int, std::string> call;
  for (const auto& f : r.findings) {
    CHECK(f.id != "pytorch.c10d_frame");  // a frame is no finding
    if (f.id == "gloo.timeout" && f.subject.rank) call[*f.subject.rank] = f.fields.value("call", "");
  }
  CHECK(call[1] == "all_reduce");
  CHECK(call[2] == "recv");
}

TEST_CASE("torchrun console: when rank 0 left early the rank the agent stopped is not blamed", "[torchrun]") {
  // The same early exit by rank 0 (a real run): ranks 1 and 3 saw a peer
  // close its connection, the agent then stopped rank 2 while it still
  // waited, and rank 0 is in no table and printed nothing, so this console
  // cannot name it. Rank 2 was alive until the agent's SIGTERM: it did not
  // close anything. (The code before this test named rank 2 the odd one out.)
  const auto c = parse(slurp("early_exit_rank0"));
  std::set<int> listed;
  for (const auto& f : c.failures)
    if (f.rank) listed.insert(*f.rank);
  CHECK(listed == std::set<int>{1, 2, 3});
  const auto a = analyse("early_exit_rank0");
  for (const auto& f : a.findings) CHECK(f.id != "torchrun.odd_rank_out");
  for (const auto* f : voting(a))
    for (const auto& s : f->supports)
      if (s.cause == "rank_skips_collective" || s.cause == "rank_stuck_in_host_code") CHECK(f->subject.rank != 2);
}

TEST_CASE("torchrun console: the --log-dir folders name the rank that left, rank 0 included", "[torchrun]") {
  // With the per-rank files of torchrun --log-dir beside the console, the
  // folders attempt_0/0..3 show the job had a rank 0, which is in no failure
  // table: it is the one that left (it printed nothing, its files are empty).
  auto a = LogAnalyzer::create(builtin_signatures());
  REQUIRE(a);
  (*a)->add_text(slurp("early_exit_rank0"), "console.log", "");
  for (int l = 0; l < 4; ++l)
    for (const char* f : {"stdout.log", "stderr.log"})
      (*a)->add_text("", "logs/none_vtb3s_0u/attempt_0/" + std::to_string(l) + "/" + f, "");
  const LogAnalysis r = (*a)->finish();
  const Finding* left = nullptr;
  for (const auto& f : r.findings)
    if (f.id == "torchrun.rank_left_early") left = &f;
  REQUIRE(left);
  CHECK(left->subject.rank == 0);
  // A folder that is not torchrun's layout names nothing.
  auto b = LogAnalyzer::create(builtin_signatures());
  REQUIRE(b);
  (*b)->add_text(slurp("early_exit_rank0"), "console.log", "");
  (*b)->add_text("", "logs/0/stderr.log", "");
  for (const auto& f : (*b)->finish().findings) CHECK(f.id != "torchrun.rank_left_early");
}

TEST_CASE("torchrun console: a point-to-point deadlock whose one rank was stopped before it printed names nobody",
          "[torchrun]") {
  // The real p2p_deadlock console, edited to the race two CI runs met (README).
  const auto a = analyse("p2p_deadlock_race");
  std::set<std::string> calls;
  for (const auto& f : a.findings) {
    CHECK(f.id != "torchrun.odd_rank_out");
    if (f.id == "gloo.timeout") calls.insert(f.fields.value("call", ""));
  }
  CHECK(calls == std::set<std::string>{"all_reduce", "recv"});
  for (const auto* f : voting(a)) CHECK(f->subject.rank != 0);
}

TEST_CASE("torchrun console: the failure table is read behind grep, kubectl, quote and colour prefixes", "[torchrun]") {
  const std::string text = slurp("sigkill");
  const auto plain = parse(text);
  REQUIRE(plain.failures.size() == 4);
  const std::vector<std::string> prefixes = {"logs/console.log:", "logs/console.log:12:", "[pod/trainer-0/main] ",
                                             "> ", "\x1b[31m"};
  for (const auto& pfx : prefixes) {
    std::string t;
    for (size_t at = 0; at < text.size();) {
      const size_t nl = text.find('\n', at);
      const size_t end = nl == std::string::npos ? text.size() : nl + 1;
      t += pfx + text.substr(at, end - at);
      at = end;
    }
    const auto c = parse(t);
    INFO(pfx);
    REQUIRE(c.failures.size() == plain.failures.size());
    const auto* rc = c.root_cause();
    REQUIRE(rc);
    CHECK(rc->rank == 2);
    CHECK(rc->signal == "SIGKILL");
    CHECK(c.agent_terminated.size() == plain.agent_terminated.size());
  }
}
