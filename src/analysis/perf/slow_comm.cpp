#include "analysis/perf/slow_comm.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/perf/perf_analysis.hpp"

namespace ccdiag::perf {

namespace {

struct Obs {
  int rank;
  size_t dump;
  int64_t created;
  int64_t completed;
  float duration_ms;
};

struct Coll {
  std::string pg, op;
  int64_t numel = 0;
  std::vector<Obs> obs;
};

}  // namespace

SlowCommAnalysis analyze_slow_comms(const std::vector<fr::RankDump>& dumps, const SlowCommOptions& o) {
  SlowCommAnalysis a;
  std::map<std::pair<std::string, int64_t>, Coll> colls;
  for (size_t d = 0; d < dumps.size(); ++d) {
    const auto& dump = dumps[d];
    for (const auto& e : dump.entries) {
      if (e.is_p2p || e.pg == fr::kNoIndex || e.state != fr::FrState::completed) continue;
      const std::string& pg = dump.pgs[e.pg].name;
      auto& c = colls[{pg, e.collective_seq}];
      c.pg = pg;
      c.op = dump.str(e.name);
      c.numel = dump.shape(e.in_shapes).total_numel;
      c.obs.push_back(Obs{dump.rank, d, e.time_created_ns, e.time_completed_ns, e.duration_ms});
    }
  }
  // Per communicator: the wire time of each complete collective.
  std::map<std::string, std::vector<double>> wire;
  std::map<std::string, CommStats> stats;
  std::map<int, std::pair<int, int>> last_count;  // rank -> (times last, collectives)
  std::map<int, std::vector<double>> lag, own_dur, peers_dur;  // durations when last: its own, its peers'
  for (const auto& [k, c] : colls) {
    if (c.obs.size() < 2) continue;
    auto& st = stats[c.pg];
    st.pg = c.pg;
    st.op = c.op;
    st.numel = c.numel;
    for (const auto& ob : c.obs)
      if (std::find(st.ranks.begin(), st.ranks.end(), ob.rank) == st.ranks.end()) st.ranks.push_back(ob.rank);
    bool all_dur = true, all_times = true;
    for (const auto& ob : c.obs) {
      all_dur = all_dur && !std::isnan(ob.duration_ms);
      all_times = all_times && ob.created != fr::kNoTime && ob.completed != fr::kNoTime;
    }
    double w = -1;
    if (all_dur) {
      float mn = c.obs.front().duration_ms;
      for (const auto& ob : c.obs) mn = std::min(mn, ob.duration_ms);
      w = mn;
    } else if (all_times) {
      int64_t last = c.obs.front().created;
      std::vector<double> done;
      for (const auto& ob : c.obs) last = std::max(last, ob.created), done.push_back(static_cast<double>(ob.completed));
      w = (median(done) - static_cast<double>(last)) / 1e6;
    }
    if (w < 0) continue;
    wire[c.pg].push_back(w);
    ++a.collectives;
    // Arrival skew, kept apart: who arrives last, and how that rank's own duration compares.
    if (all_times) {
      std::vector<double> created;
      for (const auto& ob : c.obs) created.push_back(static_cast<double>(ob.created));
      const double med = median(created);
      const auto last = std::max_element(c.obs.begin(), c.obs.end(), [](const Obs& x, const Obs& y) { return x.created < y.created; });
      for (const auto& ob : c.obs) {
        auto& lc = last_count[ob.rank];
        ++lc.second;
        if (&ob == &*last) ++lc.first;
        lag[ob.rank].push_back((static_cast<double>(ob.created) - med) / 1e6);
        if (all_dur) (&ob == &*last ? own_dur[ob.rank] : peers_dur[last->rank]).push_back(ob.duration_ms);
      }
    }
  }
  for (auto& [pg, st] : stats) {
    st.collectives = static_cast<int>(wire[pg].size());
    st.wire_ms = median(wire[pg]);
    std::sort(st.ranks.begin(), st.ranks.end());
    a.comms.push_back(st);
  }
  // Compare communicators of the same operation, size and member count.
  std::map<std::tuple<std::string, int64_t, size_t>, std::vector<CommStats*>> peers;
  for (auto& c : a.comms)
    if (c.collectives >= o.min_collectives) peers[{c.op, c.numel, c.ranks.size()}].push_back(&c);
  std::set<int> cleared, in_slow;
  std::vector<const CommStats*> slow;
  bool compared = false;
  for (auto& [key, group] : peers) {
    if (group.size() < 3) {
      for (auto* c : group) cleared.insert(c->ranks.begin(), c->ranks.end());
      continue;
    }
    compared = true;
    std::vector<double> w;
    for (auto* c : group) w.push_back(c->wire_ms);
    const double med = median(w);
    const double m = std::max(mad(w), o.mad_floor * med);
    for (auto* c : group) {
      c->z = m > 0 ? 0.6745 * (c->wire_ms - med) / m : 0;
      c->slow = c->z > o.z_threshold && c->wire_ms >= o.min_ratio * med;
      if (c->slow) {
        slow.push_back(c);
        in_slow.insert(c->ranks.begin(), c->ranks.end());
      } else {
        cleared.insert(c->ranks.begin(), c->ranks.end());
      }
    }
  }
  if (!compared)
    a.notes.push_back("no three communicators of the same operation, size and member count with enough collectives: links not compared");
  for (int r : in_slow)
    if (!cleared.count(r)) a.suspects.push_back(r);
  std::set<int> named;
  for (const auto* c : slow) {
    std::vector<int> left;
    for (int r : c->ranks)
      if (!cleared.count(r)) left.push_back(r);
    if (left.size() == 1) named.insert(left.front());
  }
  a.culprits.assign(named.begin(), named.end());
  if (!slow.empty() && a.culprits.empty())
    a.notes.push_back(fmt::format("slow communicator(s) found, but {} member(s) stay uncleared: not enough overlapping groups to name one",
                                  a.suspects.size()));
  // Arrival skew: persistent last arrivers whose own duration is the shortest (they do not wait).
  for (const auto& [rank, lc] : last_count) {
    if (lc.second < o.min_collectives) continue;
    const double frac = static_cast<double>(lc.first) / lc.second;
    const double ml = median(lag[rank]);
    if (frac < o.late_fraction || ml < o.late_min_ms) continue;
    LateRank lr;
    lr.rank = rank;
    for (const auto& d : dumps)
      if (d.rank == rank) lr.host = d.host;
    lr.fraction_last = frac;
    lr.median_lag_ms = ml;
    lr.own_median_ms = median(own_dur[rank]);
    lr.others_median_ms = median(peers_dur[rank]);
    a.late.push_back(lr);
  }
  return a;
}

std::vector<Finding> slow_comm_findings(const SlowCommAnalysis& a, const std::vector<fr::RankDump>& dumps) {
  std::vector<Finding> out;
  auto host_of = [&](int rank) {
    for (const auto& d : dumps)
      if (d.rank == rank) return d.host;
    return std::string();
  };
  auto file_of = [&](int rank) {
    for (const auto& d : dumps)
      if (d.rank == rank) return d.file;
    return std::string();
  };
  for (int r : a.culprits) {
    Finding f;
    f.id = "perf.slow_link";
    f.layer = Layer::transport;
    f.severity = Severity::error;
    f.subject.rank = r;
    if (auto h = host_of(r); !h.empty()) f.subject.host = h;
    std::vector<std::string> pgs;
    for (const auto& c : a.comms)
      if (c.slow && std::find(c.ranks.begin(), c.ranks.end(), r) != c.ranks.end())
        pgs.push_back(fmt::format("{} ({:.2f} ms vs peers, z {:.1f})", c.pg, c.wire_ms, c.z));
    f.summary = fmt::format("rank {}{}: every communicator it is in is slow on the wire ({}), every other member is cleared by a "
                            "healthy communicator: its NIC, PCIe path or link",
                            r, f.subject.host ? " on " + *f.subject.host : "", fmt::join(pgs, ", "));
    f.provenance = {Provenance{file_of(r), std::nullopt, ""}};
    f.fields = {{"rank", r}, {"communicators", pgs}};
    out.push_back(std::move(f));
  }
  for (const auto& c : a.comms) {
    if (!c.slow) continue;
    Finding f;
    f.id = "perf.slow_communicator";
    f.layer = Layer::transport;
    f.severity = Severity::warning;
    f.role = a.culprits.empty() ? FindingRole::primary : FindingRole::symptom;
    f.subject.process_group = c.pg;
    f.summary = fmt::format("process group {} ({} x {} elements, {} ranks): wire time {:.2f} ms, modified z {:.1f} against communicators "
                            "of the same shape, over {} collectives",
                            c.pg, c.op, c.numel, c.ranks.size(), c.wire_ms, c.z, c.collectives);
    f.fields = {{"pg", c.pg}, {"ranks", c.ranks}, {"wire_ms", c.wire_ms}, {"z", c.z}};
    out.push_back(std::move(f));
  }
  for (const auto& l : a.late) {
    Finding f;
    f.id = "perf.late_arrival";
    f.layer = Layer::framework;
    f.severity = Severity::warning;
    f.role = FindingRole::symptom;
    f.subject.rank = l.rank;
    if (!l.host.empty()) f.subject.host = l.host;
    f.summary = fmt::format("rank {} arrives last in {:.0f} % of collectives (median {:.1f} ms late); its own collective time is the "
                            "shortest ({:.2f} ms vs {:.2f} ms): a compute/input straggler, not a slow link — the others' long times are waiting",
                            l.rank, l.fraction_last * 100, l.median_lag_ms, l.own_median_ms, l.others_median_ms);
    f.fields = {{"rank", l.rank}, {"fraction_last", l.fraction_last}, {"median_lag_ms", l.median_lag_ms}};
    out.push_back(std::move(f));
  }
  return out;
}

nlohmann::json slow_comm_json(const SlowCommAnalysis& a) {
  nlohmann::json comms = nlohmann::json::array();
  for (const auto& c : a.comms)
    comms.push_back({{"pg", c.pg}, {"op", c.op}, {"numel", c.numel}, {"ranks", c.ranks}, {"collectives", c.collectives},
                     {"wire_ms", c.wire_ms}, {"z", c.z}, {"slow", c.slow}});
  nlohmann::json late = nlohmann::json::array();
  for (const auto& l : a.late)
    late.push_back({{"rank", l.rank}, {"host", l.host}, {"fraction_last", l.fraction_last}, {"median_lag_ms", l.median_lag_ms},
                    {"own_median_ms", l.own_median_ms}, {"others_median_ms", l.others_median_ms}});
  return {{"collectives", a.collectives}, {"communicators", comms}, {"suspects", a.suspects},
          {"culprits", a.culprits},       {"late_arrivals", late},  {"notes", a.notes}};
}

}  // namespace ccdiag::perf
