#include "analysis/perf/coll_skew.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "analysis/perf/perf_analysis.hpp"

namespace ccdiag::perf {

namespace {

constexpr double kNsPerMs = 1e6;

struct Instance {
  const CollTiming* first = nullptr;
  std::map<std::string, const CollTiming*> by_proc;  // one observation per process
};

// A process seen twice for one collective (two snapshots of one ring): the
// record that completed wins, else the first.
void add_obs(Instance& in, const CollTiming& c) {
  if (!in.first) in.first = &c;
  auto [it, fresh] = in.by_proc.emplace(c.proc.key(), &c);
  if (!fresh && !it->second->done_ns && c.done_ns) it->second = &c;
}

double robust_z(double x, double med, double m) { return m > 0 ? 0.6745 * (x - med) / m : 0; }

}  // namespace

SkewAnalysis analyze_skew(const std::vector<CollTiming>& colls, const SkewOptions& o) {
  SkewAnalysis a;
  std::map<std::tuple<std::string, std::string, uint64_t>, Instance> inst;
  for (const auto& c : colls) {
    if (c.comm.empty()) continue;
    add_obs(inst[{c.comm, c.func, c.seq}], c);
    a.procs.emplace(c.proc.key(), c.proc);
    a.comm_ranks[c.proc.key()][c.comm] = c.comm_rank;
  }

  using WireKey = std::tuple<std::string, std::string, uint64_t>;  // comm, func, count
  std::map<WireKey, std::vector<double>> wire;
  std::map<WireKey, CommWire> stats;
  std::map<std::string, std::vector<double>> lags;             // process -> lag per collective (ms)
  std::map<std::string, std::vector<double>> own_last, peers_last;
  for (const auto& [key, in] : inst) {
    if (in.by_proc.size() < 2) continue;
    ++a.collectives;
    const CollTiming& f = *in.first;
    auto& st = stats[{f.comm, f.func, f.count}];
    st.comm = f.comm;
    st.comm_name = f.comm_name;
    st.func = f.func;
    st.count = f.count;
    st.nranks = std::max(st.nranks, f.nranks);
    for (const auto& [p, c] : in.by_proc)
      if (std::find(st.members.begin(), st.members.end(), p) == st.members.end()) st.members.push_back(p);
    bool all_arrive = true, all_done = true;
    for (const auto& [p, c] : in.by_proc) {
      all_arrive = all_arrive && c->arrive_ns.has_value();
      all_done = all_done && c->done_ns.has_value() && c->arrive_ns && *c->done_ns >= *c->arrive_ns;
    }
    if (!all_arrive) continue;
    std::vector<double> arrive;
    for (const auto& [p, c] : in.by_proc) arrive.push_back(static_cast<double>(*c->arrive_ns));
    const double med_arrive = median(arrive);
    const CollTiming* last = nullptr;
    for (const auto& [p, c] : in.by_proc) {
      lags[p].push_back((static_cast<double>(*c->arrive_ns) - med_arrive) / kNsPerMs);
      if (!last || *c->arrive_ns > *last->arrive_ns) last = c;
    }
    if (!all_done) continue;
    // The rank that waited least: its time is the wire time.
    double w = -1;
    std::vector<double> others;
    for (const auto& [p, c] : in.by_proc) {
      const double d = static_cast<double>(*c->done_ns - *c->arrive_ns) / kNsPerMs;
      w = w < 0 ? d : std::min(w, d);
      if (c != last) others.push_back(d);
    }
    wire[{f.comm, f.func, f.count}].push_back(w);
    ++a.timed;
    own_last[last->proc.key()].push_back(static_cast<double>(*last->done_ns - *last->arrive_ns) / kNsPerMs);
    peers_last[last->proc.key()].push_back(median(others));
  }

  for (auto& [k, st] : stats) {
    st.collectives = static_cast<int>(wire[k].size());
    st.wire_ms = wire[k].empty() ? 0 : median(wire[k]);
    std::sort(st.members.begin(), st.members.end());
    a.comms.push_back(st);
  }
  // Communicators of the same function, count and size are comparable.
  std::map<std::tuple<std::string, uint64_t, size_t>, std::vector<CommWire*>> peers;
  for (auto& c : a.comms)
    if (c.collectives >= o.min_collectives) peers[{c.func, c.count, c.members.size()}].push_back(&c);
  std::set<std::string> cleared, in_slow;
  std::vector<const CommWire*> slow;
  bool compared = false;
  for (auto& [key, group] : peers) {
    if (group.size() < 3) continue;  // two communicators cannot outvote each other
    compared = true;
    std::vector<double> w;
    for (auto* c : group) w.push_back(c->wire_ms);
    const double med = median(w);
    const double m = std::max(mad(w), o.mad_floor * med);
    for (auto* c : group) {
      c->compared = true;
      c->z = robust_z(c->wire_ms, med, m);
      c->slow = c->z > o.z_threshold && c->wire_ms >= o.min_ratio * med;
      if (c->slow) {
        slow.push_back(c);
        in_slow.insert(c->members.begin(), c->members.end());
      } else {
        cleared.insert(c->members.begin(), c->members.end());
      }
    }
  }
  if (a.timed > 0 && !compared)
    a.notes.push_back("no three communicators of the same function, size and rank count with enough timed collectives: links not compared");
  for (const auto& p : in_slow)
    if (!cleared.count(p)) a.suspects.push_back(p);
  std::set<std::string> named;
  for (const auto* c : slow) {
    std::vector<std::string> left;
    for (const auto& p : c->members)
      if (!cleared.count(p)) left.push_back(p);
    if (left.size() == 1) named.insert(left.front());
  }
  a.culprits.assign(named.begin(), named.end());
  if (!slow.empty() && a.culprits.empty())
    a.notes.push_back(fmt::format("slow communicator(s), but {} process(es) stay uncleared: not enough overlapping communicators to name one",
                                  a.suspects.size()));

  // Late arrival: the median lag of each process against the others'.
  std::vector<std::pair<std::string, double>> med_lag;
  for (const auto& [p, l] : lags)
    if (static_cast<int>(l.size()) >= o.min_collectives) med_lag.emplace_back(p, median(l));
  if (med_lag.size() >= 3) {
    std::vector<double> v;
    for (const auto& [p, m] : med_lag) v.push_back(m);
    const double med = median(v);
    // Lags sit around 0: the floor is absolute, a tenth of the smallest lag reported.
    const double m = std::max(mad(v), 0.1 * o.late_min_ms);
    for (const auto& [p, ml] : med_lag) {
      const auto& l = lags[p];
      const double frac = static_cast<double>(std::count_if(l.begin(), l.end(), [&](double x) { return x >= o.late_min_ms; })) /
                          static_cast<double>(l.size());
      const double z = robust_z(ml, med, m);
      if (z <= o.z_threshold || ml < o.late_min_ms || frac < o.late_fraction) continue;
      LateProcess lp;
      lp.member = p;
      lp.collectives = static_cast<int>(l.size());
      lp.fraction_late = frac;
      lp.median_lag_ms = ml;
      lp.z = z;
      if (!own_last[p].empty()) lp.own_ms = median(own_last[p]), lp.others_ms = median(peers_last[p]);
      a.late.push_back(lp);
    }
  } else if (!lags.empty()) {
    a.notes.push_back("fewer than three processes with enough collectives: arrival skew not judged");
  }
  // A slow node: every process of a host (two or more) is late.
  std::map<std::string, std::vector<std::string>> by_host;
  for (const auto& [p, proc] : a.procs) by_host[proc.host].push_back(p);
  for (const auto& [host, members] : by_host) {
    if (members.size() < 2 || host.empty()) continue;
    std::vector<double> ml;
    for (const auto& p : members) {
      auto it = std::find_if(a.late.begin(), a.late.end(), [&](const LateProcess& l) { return l.member == p; });
      if (it == a.late.end()) break;
      ml.push_back(it->median_lag_ms);
    }
    if (ml.size() == members.size()) a.late_hosts.push_back(LateHost{host, members, median(ml)});
  }
  return a;
}

}  // namespace ccdiag::perf
