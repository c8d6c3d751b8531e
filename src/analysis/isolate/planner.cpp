#include "analysis/isolate/planner.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ccdiag::isolate {

int ceil_log2(size_t n) {
  int k = 0;
  while ((size_t{1} << k) < n) ++k;
  return k;
}

namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string nic_of(const Options& o, int rail) {
  return rail < static_cast<int>(o.nics.size()) ? o.nics[rail] : fmt::format("mlx5_{}", rail);
}

// Fills the round's outcomes; false when a result is missing (the round is the next to run).
bool evaluate(Round& r, const Oracle& oracle) {
  r.outcome.clear();
  bool complete = true;
  for (const auto& t : r.tests) {
    r.outcome.push_back(oracle(t));
    if (!r.outcome.back()) complete = false;
  }
  return complete;
}

std::vector<std::string> failing_hosts(const Round& r) {
  std::vector<std::string> out;
  for (size_t i = 0; i < r.tests.size(); ++i)
    if (r.outcome[i] && !*r.outcome[i])
      for (const auto& h : r.tests[i].hosts)
        if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
  return out;
}

// Each suspect gets its own partner from the cleared hosts: the test then fails only through the suspect.
std::optional<Round> disambiguate(int number, const std::vector<std::string>& suspects, const std::vector<std::string>& cleared,
                                  int rail) {
  if (cleared.size() < suspects.size()) return std::nullopt;
  Round r;
  r.number = number;
  r.name = "disambiguate";
  r.purpose = fmt::format("pair each suspect with a different host that already passed, on rail {}", rail);
  for (size_t i = 0; i < suspects.size(); ++i)
    r.tests.push_back(Test{fmt::format("r{}-rail{}-{}", number, rail, suspects[i]), {suspects[i], cleared[i]}, rail});
  return r;
}

}  // namespace

std::string command_for(const Options& o, const Test& t) {
  const std::string nic = nic_of(o, t.rail);
  const std::string bench = fmt::format("{} -b {} -e {} -g 1 -n 20 -w 2 -c 0 -T {}", o.binary, o.size, o.size, o.test_timeout_s);
  const std::string out = fmt::format("> {}/{}.txt 2>&1", o.results_dir, t.id);
  const int outer = o.test_timeout_s + 30;
  if (o.launcher == "mpirun") {
    std::string hl;
    for (const auto& h : t.hosts) hl += (hl.empty() ? "" : ",") + h + ":1";
    return fmt::format(
        "timeout -k 10 {} mpirun -np {} -N 1 -H {} -x NCCL_ALGO=Ring -x CUDA_VISIBLE_DEVICES={} -x NCCL_IB_HCA=={}:1 {} {}", outer,
        t.hosts.size(), hl, t.rail, nic, bench, out);
  }
  return fmt::format(
      "timeout -k 10 {} srun -N {} -w {} --ntasks-per-node=1 --export=ALL,NCCL_ALGO=Ring,CUDA_VISIBLE_DEVICES={},NCCL_IB_HCA=={}:1 "
      "{} {}",
      outer, t.hosts.size(), join(t.hosts, ","), t.rail, nic, bench, out);
}

Plan advance(const Options& o, const Oracle& oracle) {
  Plan p;
  Conclusion& c = p.conclusion;
  const std::vector<std::string>& S = o.hosts;
  auto pending = [&](Round r) {
    p.rounds.push_back(std::move(r));
    c.kind = "pending";
    c.summary = fmt::format("run round {} and call again with --results", p.rounds.back().number);
    return p;
  };
  if (S.size() < 2) {
    c.kind = "inconclusive";
    c.summary = "at least two hosts are needed for an inter-host test";
    return p;
  }
  // Round 1: every rail at once, one ring per rail over all suspects.
  Round r1;
  r1.number = 1;
  r1.name = "rails";
  r1.purpose = fmt::format("one Ring all_reduce per rail over all {} hosts, concurrently: which rail is slow", S.size());
  for (int r = 0; r < o.rails; ++r) r1.tests.push_back(Test{fmt::format("r1-rail{}", r), S, r});
  if (!evaluate(r1, oracle)) return pending(std::move(r1));
  std::vector<int> bad_rails;
  for (size_t i = 0; i < r1.tests.size(); ++i)
    if (!*r1.outcome[i]) bad_rails.push_back(r1.tests[i].rail);
  p.rounds.push_back(r1);
  if (bad_rails.empty()) {
    c.kind = "not_reproduced";
    c.summary = fmt::format("every rail passed over all {} hosts at {}: not reproduced at this size and scale; check fabric "
                            "counters (port_xmit_wait, symbol errors) and repeat with -N or larger sizes",
                            S.size(), o.size);
    p.decisions.push_back("round 1: all rails pass");
    return p;
  }
  const bool host_level = bad_rails.size() == static_cast<size_t>(o.rails) && o.rails > 1;
  const int rail = bad_rails.front();
  p.decisions.push_back(fmt::format("round 1: rail(s) {} below {:g} GB/s{}", fmt::join(bad_rails, ","), o.floor_gbs,
                                    host_level ? " (every rail: a host-level fault)" : ""));
  auto conclude = [&](std::vector<std::string> culprits, const Round& last) {
    if (culprits.empty()) {
      // The failing group passes with other partners: the fault is between its members.
      c.kind = "culprit_link";
      c.rail = rail;
      c.hosts = failing_hosts(p.rounds[p.rounds.size() - 2]);
      c.summary = fmt::format("{} fail together on rail {} ({}) but each passes with another partner: the path between them "
                              "(cables, leaf/spine ports) or an intermittent fault; repeat with -D 30 and read switch counters",
                              join(c.hosts, " and "), rail, nic_of(o, rail));
      return p;
    }
    (void)last;
    c.hosts = culprits;
    c.rail = host_level ? -1 : rail;
    if (culprits.size() > 1) {
      c.kind = "several";
      c.summary = fmt::format("several hosts fail on rail {}: {}", rail, join(culprits, ", "));
    } else if (host_level) {
      c.kind = "culprit_host";
      c.summary = fmt::format("host {} is slow on every rail: host-level fault (PCIe root complex, GPUs, all NICs, GDR); run "
                              "`ccdiag diagnose` and `ccdiag probe pcie` on it",
                              culprits[0]);
    } else {
      c.kind = "culprit_nic";
      c.summary = fmt::format("host {} rail {}: NIC {} port 1, its cable or its leaf port (GPU {} and its PCIe path are the "
                              "other parts on that rail); run `ccdiag probe rdma` and `ccdiag probe pcie` on it",
                              culprits[0], rail, nic_of(o, rail), rail);
    }
    return p;
  };

  std::vector<std::string> cleared = o.good;
  bool more_faults = false;
  if (o.mode == "bisect") {
    std::vector<std::string> X = S;
    int number = 2;
    while (X.size() > 3) {
      const size_t half = X.size() / 2;
      std::vector<std::string> A(X.begin(), X.begin() + half), B(X.begin() + half, X.end());
      Round r;
      r.number = number;
      r.name = "bisect";
      r.purpose = fmt::format("rail {}: split {} suspects into two halves and test both concurrently", rail, X.size());
      r.tests = {Test{fmt::format("r{}-rail{}-a", number, rail), A, rail}, Test{fmt::format("r{}-rail{}-b", number, rail), B, rail}};
      if (!evaluate(r, oracle)) return pending(std::move(r));
      p.rounds.push_back(r);
      const bool fa = !*r.outcome[0], fb = !*r.outcome[1];
      if (!fa) cleared.insert(cleared.end(), A.begin(), A.end());
      if (!fb) cleared.insert(cleared.end(), B.begin(), B.end());
      p.decisions.push_back(fmt::format("round {}: half a {}, half b {}", number, fa ? "fails" : "passes", fb ? "fails" : "passes"));
      if (!fa && !fb) {
        c.kind = "inconclusive";
        c.summary = fmt::format("rail {} fails over {} hosts but both halves pass: the fault needs scale (congestion, adaptive "
                                "routing) or spans the halves; read fabric counters",
                                rail, X.size());
        return p;
      }
      if (fa && fb) {
        // Two defects (or one between the halves): keep narrowing the first; report the rest.
        p.decisions.push_back("both halves fail: more than one fault; narrowing half a first");
        more_faults = true;
      }
      X = fa ? A : B;
      ++number;
    }
    auto r = disambiguate(number, X, cleared, rail);
    if (!r) {
      c.kind = "inconclusive";
      c.summary = "not enough hosts that passed to pair each remaining suspect";
      return p;
    }
    if (!evaluate(*r, oracle)) return pending(std::move(*r));
    p.rounds.push_back(*r);
    std::vector<std::string> culprits;
    for (size_t i = 0; i < r->tests.size(); ++i)
      if (!*r->outcome[i]) culprits.push_back(r->tests[i].hosts[0]);
    p.decisions.push_back(fmt::format("round {}: failing with a good partner: {}", number, culprits.empty() ? "none" : join(culprits, ", ")));
    if (culprits.empty()) {
      // The link between the last suspects: report them as a pair.
      c.kind = "culprit_link";
      c.rail = rail;
      c.hosts = X;
      c.summary = fmt::format("{} fail only together on rail {}: the path between them or an intermittent fault", join(X, " and "), rail);
      return p;
    }
    Plan out = conclude(culprits, *r);
    if (more_faults)
      out.conclusion.summary += "; another fault remains in the other half: rerun without the culprit (HOSTS minus it)";
    return out;
  }

  // pairs: a perfect matching of the suspects on the bad rail, all pairs concurrently
  // (an odd host out joins the last pair as a three-host ring).
  Round r2;
  r2.number = 2;
  r2.name = "pairs";
  r2.purpose = fmt::format("rail {}: every host in one pair, all {} pairs concurrently", rail, S.size() / 2);
  for (size_t i = 0; i + 1 < S.size(); i += 2) {
    std::vector<std::string> h = {S[i], S[i + 1]};
    if (S.size() % 2 == 1 && i + 3 == S.size()) h.push_back(S[i + 2]);
    r2.tests.push_back(Test{fmt::format("r2-rail{}-p{}", rail, i / 2), h, rail});
  }
  if (!evaluate(r2, oracle)) return pending(std::move(r2));
  p.rounds.push_back(r2);
  for (size_t i = 0; i < r2.tests.size(); ++i)
    if (*r2.outcome[i]) cleared.insert(cleared.end(), r2.tests[i].hosts.begin(), r2.tests[i].hosts.end());
  const auto suspects = failing_hosts(r2);
  p.decisions.push_back(fmt::format("round 2: failing pair members: {}", suspects.empty() ? "none" : join(suspects, ", ")));
  if (suspects.empty()) {
    c.kind = "inconclusive";
    c.summary = fmt::format("rail {} fails over all hosts but every pair passes: the fault needs scale (congestion, adaptive "
                            "routing, spine) — try --mode bisect and read fabric counters",
                            rail);
    return p;
  }
  auto r3 = disambiguate(3, suspects, cleared, rail);
  if (!r3) {
    c.kind = "inconclusive";
    c.hosts = suspects;
    c.summary = "not enough hosts that passed to pair each suspect; add known-good hosts with --good";
    return p;
  }
  if (!evaluate(*r3, oracle)) return pending(std::move(*r3));
  p.rounds.push_back(*r3);
  std::vector<std::string> culprits;
  for (size_t i = 0; i < r3->tests.size(); ++i)
    if (!*r3->outcome[i]) culprits.push_back(r3->tests[i].hosts[0]);
  p.decisions.push_back(fmt::format("round 3: failing with a good partner: {}", culprits.empty() ? "none" : join(culprits, ", ")));
  return conclude(culprits, *r3);
}

}  // namespace ccdiag::isolate
