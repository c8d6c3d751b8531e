// `ccdiag isolate` planner against a simulator with one hidden bad host or bad
// NIC (host, rail): the plan is replayed round by round exactly as the CLI does
// with --results (only the tests of executed rounds have outcomes), and must
// name the culprit within 2*ceil(log2 n) + 2 rounds at 8, 64 and 1,024 hosts.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <random>
#include <set>

#include "analysis/isolate/planner.hpp"

using namespace ccdiag::isolate;

namespace {

struct Defect {
  enum Kind { none, bad_host, bad_nic } kind = none;
  std::string host;
  int rail = -1;
};

// A Ring test over a host set on one rail is slow iff a member is bad on that rail.
bool passes(const Test& t, const Defect& d) {
  if (d.kind == Defect::none) return true;
  const bool member = std::find(t.hosts.begin(), t.hosts.end(), d.host) != t.hosts.end();
  if (!member) return true;
  return d.kind == Defect::bad_nic && t.rail != d.rail;
}

struct SimResult {
  Plan plan;
  int rounds = 0;
  size_t tests = 0;
};

SimResult simulate(const Options& o, const Defect& d) {
  std::set<std::string> executed;
  SimResult s;
  for (int iter = 0; iter < 100; ++iter) {
    s.plan = advance(o, [&](const Test& t) -> std::optional<bool> {
      if (!executed.count(t.id)) return std::nullopt;
      return passes(t, d);
    });
    if (s.plan.conclusion.kind != "pending") break;
    ++s.rounds;
    for (const auto& t : s.plan.rounds.back().tests) {
      REQUIRE(executed.insert(t.id).second);  // a round is never asked for twice
      ++s.tests;
    }
  }
  return s;
}

std::vector<std::string> hosts(size_t n) {
  std::vector<std::string> h;
  for (size_t i = 1; i <= n; ++i) h.push_back(fmt::format("gpu{:04}", i));
  return h;
}

}  // namespace

TEST_CASE("isolate: one bad host or NIC found within 2*ceil(log2 n)+2 rounds", "[isolate]") {
  std::mt19937 rng(20);
  for (size_t n : {size_t{8}, size_t{64}, size_t{1024}, size_t{9}, size_t{100}}) {
    for (const char* mode : {"pairs", "bisect"}) {
      Options o;
      o.hosts = hosts(n);
      o.mode = mode;
      std::vector<size_t> where = {0, n / 2, n - 1, std::uniform_int_distribution<size_t>(0, n - 1)(rng)};
      for (size_t w : where)
        for (auto kind : {Defect::bad_host, Defect::bad_nic}) {
          Defect d;
          d.kind = kind;
          d.host = o.hosts[w];
          d.rail = kind == Defect::bad_nic ? static_cast<int>(w % 8) : -1;
          INFO("n=" << n << " mode=" << mode << " bad=" << d.host << " rail=" << d.rail);
          const auto s = simulate(o, d);
          const auto& c = s.plan.conclusion;
          REQUIRE(c.hosts == std::vector<std::string>{d.host});
          CHECK(c.kind == (kind == Defect::bad_host ? "culprit_host" : "culprit_nic"));
          if (kind == Defect::bad_nic) CHECK(c.rail == d.rail);
          CHECK(s.rounds <= 2 * ceil_log2(n) + 2);
          CHECK(static_cast<int>(s.plan.rounds.size()) == s.rounds);
          if (std::string(mode) == "pairs") CHECK(s.rounds == 3);
          else CHECK(s.rounds <= ceil_log2(n) + 1);
        }
    }
  }
}

TEST_CASE("isolate: a healthy fleet stops after the rail round with 'not reproduced'", "[isolate]") {
  Options o;
  o.hosts = hosts(64);
  const auto s = simulate(o, Defect{});
  CHECK(s.rounds == 1);
  CHECK(s.tests == 8);
  CHECK(s.plan.conclusion.kind == "not_reproduced");
  CHECK(s.plan.conclusion.hosts.empty());
}

TEST_CASE("isolate: a fault between two hosts only is reported as a link, not a host", "[isolate]") {
  Options o;
  o.hosts = hosts(8);
  // gpu0003 and gpu0004 fail only when tested together (a path between them), on rail 2.
  auto oracle_for = [](const Test& t) {
    const bool a = std::find(t.hosts.begin(), t.hosts.end(), "gpu0003") != t.hosts.end();
    const bool b = std::find(t.hosts.begin(), t.hosts.end(), "gpu0004") != t.hosts.end();
    return !(a && b && t.rail == 2);
  };
  std::set<std::string> executed;
  Plan p;
  for (int i = 0; i < 10; ++i) {
    p = advance(o, [&](const Test& t) -> std::optional<bool> {
      if (!executed.count(t.id)) return std::nullopt;
      return oracle_for(t);
    });
    if (p.conclusion.kind != "pending") break;
    for (const auto& t : p.rounds.back().tests) executed.insert(t.id);
  }
  CHECK(p.conclusion.kind == "culprit_link");
  CHECK(p.conclusion.hosts == std::vector<std::string>{"gpu0003", "gpu0004"});
  CHECK(p.conclusion.rail == 2);
}

TEST_CASE("isolate: commands pin the rail's GPU and NIC and bound the run", "[isolate]") {
  Options o;
  o.hosts = {"a1", "a2"};
  o.nics = {"mlx5_0", "mlx5_3"};
  Test t{"r2-rail1-p0", {"a1", "a2"}, 1};
  const std::string srun = command_for(o, t);
  CHECK(srun.find("srun -N 2 -w a1,a2") != std::string::npos);
  CHECK(srun.find("CUDA_VISIBLE_DEVICES=1") != std::string::npos);
  CHECK(srun.find("NCCL_IB_HCA==mlx5_3:1") != std::string::npos);
  CHECK(srun.find("NCCL_ALGO=Ring") != std::string::npos);
  CHECK(srun.find("timeout -k 10 210") != std::string::npos);
  CHECK(srun.find("> isolate-results/r2-rail1-p0.txt") != std::string::npos);
  o.launcher = "mpirun";
  const std::string mpi = command_for(o, t);
  CHECK(mpi.find("mpirun -np 2 -N 1 -H a1:1,a2:1 -x NCCL_ALGO=Ring") != std::string::npos);
  CHECK(mpi.find("-T 180") != std::string::npos);
}
