// Thread roles, rank activity lines and the cross-rank census.
#include <catch2/catch.hpp>

#include "analysis/census/census.hpp"
#include "ccdiag/thread_roles.hpp"

using namespace ccdiag;

namespace {

StackFrame fr(const char* fn, const char* mod = "train") {
  StackFrame f;
  f.function = fn;
  f.module = mod;
  return f;
}

ProcessStacks rank_in(int rank, std::vector<StackFrame> main_frames, const char* syscall = "futex") {
  ProcessStacks p;
  p.pid = 1000 + rank;
  p.rank = rank;
  p.host = "node7";
  ThreadStack m;
  m.tid = p.pid;
  m.name = "python3";
  m.state = "S";
  m.syscall = syscall;
  m.capture = "stopped";
  m.frames = std::move(main_frames);
  p.threads.push_back(m);
  ThreadStack proxy;
  proxy.tid = p.pid + 1;
  proxy.name = "python3";
  proxy.frames = {fr("__futex_abstimed_wait_common", "libc.so.6"), fr("ncclProxyProgress(void*)", "libnccl.so.2")};
  p.threads.push_back(proxy);
  assign_roles(p);
  return p;
}

std::vector<StackFrame> in_allreduce() {
  return {fr("__futex_abstimed_wait_common", "libc.so.6"), fr("cudaStreamSynchronize", "libcudart.so.12"),
          fr("ncclAllReduce", "libnccl.so.2"), fr("c10d::ProcessGroupNCCL::allreduce", "libtorch_cuda.so"),
          fr("main")};
}

std::vector<StackFrame> in_dataloader() {
  return {fr("__futex_abstimed_wait_common", "libc.so.6"), fr("pthread_cond_wait@@GLIBC_2.3.2", "libc.so.6"),
          fr("load_next_batch"), fr("main")};
}

}  // namespace

TEST_CASE("roles from frames and names", "[census]") {
  auto p = rank_in(0, in_allreduce());
  CHECK(p.threads[0].role == "main");
  CHECK(p.threads[1].role == "nccl_proxy_progress");
  ThreadStack w;
  w.tid = 5;
  w.name = "pt_nccl_watchdg";
  CHECK(thread_role(w, 1) == "pytorch_watchdog");
  w.name = "pt_nccl_heartbt";
  CHECK(thread_role(w, 1) == "pytorch_heartbeat");
  w.name = "cuda-EvtHandlr";
  CHECK(thread_role(w, 1) == "cuda_driver");
  w.name = "worker";
  w.frames = {fr("poll", "libc.so.6"), fr("??", "libcuda.so.1")};
  CHECK(thread_role(w, 1) == "cuda_driver");
}

TEST_CASE("one-line activity names the framework call before the syscall", "[census]") {
  CHECK(rank_in(0, in_allreduce()).activity.rfind("in cudaStreamSynchronize", 0) == 0);
  CHECK(rank_in(1, in_dataloader()).activity == "in a condition-variable wait (under load_next_batch)");
  auto r = rank_in(2, {fr("__libc_recv", "libc.so.6"), fr("wait_for_peer"), fr("main")}, "recvfrom");
  CHECK(r.activity == "in recv on a socket (under wait_for_peer)");
  auto b = rank_in(3, {fr("__libc_recv", "libc.so.6"), fr("bootstrapNetRecv", "libnccl.so.2"),
                       fr("ncclCommInitRank", "libnccl.so.2")}, "recvfrom");
  CHECK(b.activity.rfind("in ncclCommInitRank bootstrap", 0) == 0);
}

TEST_CASE("census: seven ranks in allreduce, rank 5 in the dataloader is the odd rank out", "[census]") {
  std::vector<ProcessStacks> ps;
  for (int r = 0; r < 8; ++r) ps.push_back(r == 5 ? rank_in(r, in_dataloader()) : rank_in(r, in_allreduce()));
  const Census c = run_census(ps);
  REQUIRE(c.groups.size() == 2);
  CHECK(c.groups[0].members.size() == 7);
  CHECK(c.lines[0].rfind("7 ranks (0,1,2,3,4,6,7): in cudaStreamSynchronize", 0) == 0);
  CHECK(c.lines[1] == "rank 5 on node7: in a condition-variable wait (under load_next_batch)");
  REQUIRE(c.odd.size() == 1);
  CHECK(c.odd[0].rank == std::optional<int>(5));
  const Finding* f = nullptr;
  for (const auto& x : c.findings)
    if (x.id == "stacks.rank_outside_collective") f = &x;
  REQUIRE(f);
  CHECK(f->subject.rank == std::optional<int>(5));
  CHECK(f->subject.pid == std::optional<int64_t>(1005));
  CHECK(f->subject.host == std::optional<std::string>("node7"));
  REQUIRE(f->supports.size() == 1);
  CHECK(f->supports[0].cause == "rank_stuck_in_host_code");
  CHECK(f->supports[0].weight == 40.0);  // 7 agreeing ranks: capped
}

TEST_CASE("census: all ranks agree -> no odd rank, no primary finding", "[census]") {
  std::vector<ProcessStacks> ps;
  for (int r = 0; r < 4; ++r) ps.push_back(rank_in(r, in_allreduce()));
  const Census c = run_census(ps);
  CHECK(c.groups.size() == 1);
  CHECK(c.odd.empty());
  for (const auto& f : c.findings) CHECK(f.role != FindingRole::primary);
}

TEST_CASE("census: recursion depth does not split groups", "[census]") {
  auto a = rank_in(0, {fr("leaf"), fr("rec"), fr("rec"), fr("rec"), fr("main")});
  auto b = rank_in(1, {fr("leaf"), fr("rec"), fr("main")});
  CHECK(stack_signature(a.threads[0]) == stack_signature(b.threads[0]));
}

TEST_CASE("census findings from stacks.process evidence of bundles", "[census]") {
  EvidenceSet set;
  for (int r = 0; r < 3; ++r) {
    Evidence e;
    e.kind = "stacks.process";
    e.subject.host = r == 2 ? "node8" : "node7";
    e.subject.rank = r;
    ProcessStacks p = r == 2 ? rank_in(r, in_dataloader()) : rank_in(r, in_allreduce());
    p.host.reset();
    e.data = p;
    set.evidence.push_back(e);
  }
  Evidence bad;
  bad.kind = "stacks.process";
  bad.data = {{"threads", "not an array"}};
  set.evidence.push_back(bad);
  append_census_findings(set);
  auto odd = set.findings_with("stacks.rank_outside_collective");
  REQUIRE(odd.size() == 1);
  CHECK(odd[0]->subject.rank == std::optional<int>(2));
  CHECK(odd[0]->subject.host == std::optional<std::string>("node8"));
}

TEST_CASE("ranks of two jobs on one host are counted apart", "[census]") {
  // Job A (port 29500): rank 2 in its dataloader while 0, 1, 3 wait in an
  // all_reduce. Job B (port 29600) beside it on the same host: all four ranks
  // loading data, as a healthy job does. Mixed, the dataloader ranks were the
  // majority (5 of 8) and job A's waiting ranks looked odd; apart, A's rank 2
  // is its odd rank out and B has none.
  EvidenceSet set;
  for (int job = 0; job < 2; ++job)
    for (int r = 0; r < 4; ++r) {
      ProcessStacks p = (job == 1 || r == 2) ? rank_in(r, in_dataloader()) : rank_in(r, in_allreduce());
      p.pid = 1000 + 100 * job + r;
      p.threads[0].tid = p.pid;
      Evidence s;
      s.kind = "stacks.process";
      s.subject.host = "node7";
      s.subject.rank = r;
      s.subject.pid = p.pid;
      s.data = p;
      set.evidence.push_back(s);
      Evidence rp;
      rp.kind = "ranks.process";
      rp.subject.host = "node7";
      rp.subject.pid = p.pid;
      rp.subject.rank = r;
      rp.data = {{"env", {{"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", job == 0 ? "29500" : "29600"}}}};
      set.evidence.push_back(rp);
    }
  append_census_findings(set);
  auto odd = set.findings_with("stacks.rank_outside_collective");
  REQUIRE(odd.size() == 1);
  CHECK(odd[0]->subject.rank == std::optional<int>(2));
  CHECK(odd[0]->subject.pid == std::optional<int64_t>(1002));
  CHECK(odd[0]->fields.value("job", "") == "127.0.0.1:29500/");
}

namespace {

// A Python rank's main thread in a futex: libc's wait, then one Python frame.
ThreadStack python_thread_in_futex(const char* function, const char* file, int line) {
  ThreadStack t;
  t.tid = 5;
  t.syscall = "futex";
  StackFrame native;
  native.function = "__futex_abstimed_wait_common";
  StackFrame py;
  py.kind = "python";
  py.function = function;
  py.file = file;
  py.line = line;
  t.frames = {native, py};
  return t;
}

}  // namespace

TEST_CASE("census names a Python rank by its innermost Python frame", "[census][python]") {
  const ThreadStack t = python_thread_in_futex("Trainer.evaluate", "/srv/job/train.py", 212);
  CHECK(ccdiag::thread_activity(t) == "in a user futex at train.py:212 in Trainer.evaluate");
}

TEST_CASE("a Python rank blocked under torch.distributed's call is in a c10d wait, native frames or not",
          "[census][python]") {
  // A real capture (busy scenario, rank 3): the unwinder stopped in libc, so
  // no c10d:: frame, but the innermost Python frame is all_reduce in
  // distributed_c10d.py. It read as "in a user futex" and split the waiting
  // ranks of one all_reduce in two groups.
  ThreadStack t = python_thread_in_futex(
      "all_reduce", "/srv/job/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", 4181);
  CHECK(ccdiag::thread_activity(t) == "in a c10d wait at distributed_c10d.py:4181 in all_reduce");
  // Running (not blocked) inside that file is not a wait.
  t.syscall.clear();
  t.state = "R";
  CHECK(ccdiag::thread_activity(t).rfind("running user code", 0) == 0);
}

TEST_CASE("census names the frame where the odd rank's stack parts from the majority", "[census]") {
  // Same wait, same activity text on both sides; only an outer frame differs.
  auto wait_under = [](const char* caller) {
    return std::vector<StackFrame>{fr("__futex_abstimed_wait_common", "libc.so.6"),
                                   fr("c10d::ProcessGroupNCCL::allreduce", "libtorch_cuda.so"), fr(caller),
                                   fr("main")};
  };
  std::vector<ProcessStacks> ps;
  for (int r = 0; r < 4; ++r) ps.push_back(rank_in(r, r == 2 ? in_dataloader() : wait_under("train_step")));
  const auto c = run_census(ps);
  const Finding* odd = nullptr;
  for (const auto& f : c.findings)
    if (f.id == "stacks.rank_outside_collective") odd = &f;
  REQUIRE(odd);
  CHECK(odd->subject.rank == 2);
  CHECK(odd->fields["differs_at"] == "load_next_batch");
  CHECK(odd->fields["majority_at"] == "train_step");
  CHECK(odd->summary.find("stacks part at load_next_batch vs train_step") != std::string::npos);
}

TEST_CASE("a restarted timed wait is the wait, never a stop of the target", "[census]") {
  ThreadStack t;
  t.tid = 7;
  t.state = "S";
  t.syscall = "restart_syscall";
  t.frames = {fr("__GI___poll", "libc.so.6"), fr("main")};
  const std::string a = thread_activity(t);
  CHECK(a.find("in poll") == 0);
  CHECK(a.find("stop") == std::string::npos);
  t.frames = {fr("__clock_nanosleep", "libc.so.6"), fr("main")};
  CHECK(thread_activity(t).find("sleeping") == 0);
}

namespace {

ProcessStacks waiting_on(int rank, std::vector<StackFrame> frames, const char* pg, const char* desc, std::vector<int> ranks) {
  ProcessStacks p = rank_in(rank, std::move(frames));
  p.threads[0].c10d = C10dWaitInfo{"all_reduce", pg, desc, std::move(ranks)};
  return p;
}

}  // namespace

TEST_CASE("census names the process group and dimension the others wait in, and who waits for the odd rank",
          "[census]") {
  // A 2x2 DeviceMesh: rank 2 sleeps; rank 3 waits for it in tp {2,3},
  // rank 0 in dp {0,2}; rank 1 in dp {1,3} (for rank 3).
  std::vector<ProcessStacks> ps = {waiting_on(0, in_allreduce(), "1", "mesh_dp", {0, 2}),
                                   waiting_on(1, in_allreduce(), "2", "mesh_dp", {1, 3}),
                                   rank_in(2, in_dataloader()),
                                   waiting_on(3, in_allreduce(), "4", "mesh_tp", {2, 3})};
  auto c = run_census(ps);
  const Finding* odd = nullptr;
  for (const auto& f : c.findings)
    if (f.id == "stacks.rank_outside_collective") odd = &f;
  REQUIRE(odd);
  CHECK(odd->subject.rank == 2);
  CHECK_THAT(odd->summary, Catch::Contains("process group 4 (tp dimension, DeviceMesh mesh_tp; ranks 2,3)"));
  CHECK_THAT(odd->summary, Catch::Contains("awaited by rank 0 on node7 in all_reduce on process group 1"));
  REQUIRE(odd->fields["awaited_in"].size() == 2);  // ranks 0 and 3, not rank 1 (its group lacks rank 2)
  CHECK(odd->fields["awaited_in"][1]["pg_desc"] == "mesh_tp");
  CHECK(odd->fields["seq"].is_null());
  bool line = false;
  for (const auto& l : c.lines) line |= l.find("[rank 3]") != std::string::npos && l.find("mesh_tp") != std::string::npos;
  CHECK(line);
}

TEST_CASE("census: two ranks each waiting on a group of the other are a cross-group deadlock, no single culprit",
          "[census]") {
  // Sub-groups {0,1}, {2,3}: ranks 0, 1, 2 wait in the world all_reduce,
  // rank 3 in {2,3}'s (rank 2 never came).
  auto sub = [] {
    auto v = in_allreduce();
    v.insert(v.end() - 1, fr("subgroup_step"));
    return v;
  };
  std::vector<ProcessStacks> ps = {waiting_on(0, in_allreduce(), "0", "default_pg", {0, 1, 2, 3}),
                                   waiting_on(1, in_allreduce(), "0", "default_pg", {0, 1, 2, 3}),
                                   waiting_on(2, in_allreduce(), "0", "default_pg", {0, 1, 2, 3}),
                                   waiting_on(3, sub(), "2", "undefined", {2, 3})};
  auto c = run_census(ps);
  const Finding* f = nullptr;
  for (const auto& x : c.findings) {
    CHECK(x.id != "stacks.rank_in_different_collective");
    if (x.id == "stacks.groups_wait_on_each_other") f = &x;
  }
  REQUIRE(f);
  CHECK_FALSE(f->subject.rank.has_value());
  CHECK(f->fields["ranks"] == nlohmann::json::array({3, 2}));
  REQUIRE(f->supports.size() >= 1);
  CHECK(f->supports[0].cause == "wrong_process_group");
  CHECK_THAT(f->summary, Catch::Contains("rank 3 on node7 waits in all_reduce on process group 2 (ranks 2,3) for rank 2"));
}

TEST_CASE("census entries take the collective sequence number from a flight-recorder finding on the same rank",
          "[census]") {
  EvidenceSet set;
  std::vector<ProcessStacks> ps = {waiting_on(0, in_allreduce(), "0", "default_pg", {0, 1, 2}),
                                   waiting_on(1, in_allreduce(), "0", "default_pg", {0, 1, 2}),
                                   rank_in(2, in_dataloader())};
  for (auto& f : run_census(ps).findings) set.findings.push_back(std::move(f));
  Finding fr;
  fr.id = "fr.missing_ranks";
  fr.role = FindingRole::primary;
  fr.subject.rank = 2;
  fr.subject.process_group = "0";
  fr.subject.seq = 1203;
  fr.fields = {{"kind", "missing_ranks"}, {"ranks", {2}}, {"pg_desc", "default_pg"}};
  set.findings.push_back(fr);
  attach_fr_sequence(set);
  const Finding* odd = nullptr;
  for (const auto& f : set.findings)
    if (f.id == "stacks.rank_outside_collective") odd = &f;
  REQUIRE(odd);
  CHECK(odd->fields["seq"] == 1203);
  CHECK(odd->fields["seq_process_group"] == "0");
  CHECK_THAT(odd->summary, Catch::Contains("flight recorder: process group 0 (world, default_pg) seq 1203 (missing_ranks)"));
}

TEST_CASE("census: two halves blocked in different collectives, no majority: the ranks diverged", "[census]") {
  auto in_broadcast = [] {
    return std::vector<StackFrame>{fr("__futex_abstimed_wait_common", "libc.so.6"),
                                   fr("cudaStreamSynchronize", "libcudart.so.12"), fr("ncclBroadcast", "libnccl.so.2"),
                                   fr("c10d::ProcessGroupNCCL::broadcast", "libtorch_cuda.so"), fr("main")};
  };
  std::vector<ProcessStacks> ps = {rank_in(0, in_allreduce()), rank_in(1, in_allreduce()), rank_in(2, in_broadcast()),
                                   rank_in(3, in_broadcast())};
  const auto c = run_census(ps);
  const Finding* f = nullptr;
  for (const auto& x : c.findings)
    if (x.id == "stacks.ranks_in_different_calls") f = &x;
  REQUIRE(f);
  CHECK(f->role == FindingRole::primary);
  REQUIRE_FALSE(f->supports.empty());
  CHECK(f->supports.front().cause == "mismatched_collectives");
  // Half in a collective, half in host code is not that (either side may be the odd one).
  ps[2] = rank_in(2, in_dataloader());
  ps[3] = rank_in(3, in_dataloader());
  for (const auto& x : run_census(ps).findings) CHECK(x.id != "stacks.ranks_in_different_calls");
}

namespace {

ProcessStacks with_progress(ProcessStacks p, uint64_t wakeups) {
  p.progress = ThreadProgress{400, wakeups, 0, wakeups ? 20.0 : 0.0};
  return p;
}

std::vector<StackFrame> in_allgather() {
  return {fr("__futex_abstimed_wait_common", "libc.so.6"), fr("ncclAllGather", "libnccl.so.2"),
          fr("c10d::ProcessGroupNCCL::allgather", "libtorch_cuda.so"), fr("main")};
}

}  // namespace

TEST_CASE("census: ranks that kept waking before the capture are a running job, nobody is named", "[census]") {
  // The shape of a hang (three in a collective, one in host code), but every
  // rank woke many times in the window: a job caught mid-step.
  std::vector<ProcessStacks> ps;
  for (int r = 0; r < 4; ++r) ps.push_back(with_progress(r == 1 ? rank_in(r, in_dataloader()) : rank_in(r, in_allreduce()), 15));
  const Census c = run_census(ps);
  const Finding* moving = nullptr;
  for (const auto& f : c.findings) {
    CHECK(f.role != FindingRole::primary);
    if (f.id == "stacks.ranks_progressing") moving = &f;
  }
  REQUIRE(moving);
  CHECK(moving->fields["moving"] == 4);
  CHECK(moving->fields["min_wakeups"] == 15);
  CHECK(c.odd.empty());

  // The same snapshot with the ranks still (no wake-ups): a hang, rank 1 named.
  for (auto& p : ps) p.progress->wakeups = 0;
  const Census h = run_census(ps);
  REQUIRE(h.odd.size() == 1);
  CHECK(h.odd[0].rank == std::optional<int>(1));

  // One rank moving of four is no running job (the odd rank itself may be busy).
  ps[1].progress->wakeups = 40;
  CHECK(run_census(ps).odd.size() == 1);
}

TEST_CASE("census: a rank still in another collective on the same group, beside still waiters, votes mismatch",
          "[census]") {
  std::vector<ProcessStacks> ps;
  for (int r = 0; r < 4; ++r)
    ps.push_back(r == 2 ? waiting_on(r, in_allgather(), "0", "default_pg", {0, 1, 2, 3})
                        : waiting_on(r, in_allreduce(), "0", "default_pg", {0, 1, 2, 3}));
  auto weight_of = [](const Census& c, const char* cause) {
    for (const auto& f : c.findings)
      if (f.id == "stacks.rank_in_different_collective")
        for (const auto& s : f.supports)
          if (s.cause == cause) return s.weight;
    return 0.0;
  };
  // Unmeasured (a bundle without progress): a snapshot, weak.
  CHECK(weight_of(run_census(ps), "mismatched_collectives") == 3.0);
  // Measured still on every rank: stuck in calls that cannot match.
  for (auto& p : ps) p = with_progress(p, 0);
  const Census c = run_census(ps);
  CHECK(weight_of(c, "mismatched_collectives") == 18.0);  // 3 agreeing ranks x 6
  for (const auto& f : c.findings)
    if (f.id == "stacks.rank_in_different_collective") {
      CHECK(f.subject.rank == std::optional<int>(2));
      CHECK(f.fields["measured_still"] == true);
    }
}

TEST_CASE("stacks JSON keeps the progress measure", "[census]") {
  ProcessStacks p = with_progress(rank_in(0, in_allreduce()), 7);
  const nlohmann::json j = p;
  CHECK(j["progress"]["wakeups"] == 7);
  const ProcessStacks back = j.get<ProcessStacks>();
  REQUIRE(back.progress);
  CHECK(back.progress->wakeups == 7);
  CHECK(back.progress->window_ms == 400);
}
