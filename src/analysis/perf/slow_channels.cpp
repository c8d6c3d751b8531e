#include "analysis/perf/slow_channels.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "analysis/perf/perf_analysis.hpp"

namespace ccdiag::perf {

namespace {

// The faster half of a set (its first ceil(n/2) values in order). A slow link only
// ever adds time and may slow half of a communicator's channels (one NIC of four
// carries the entry or exit of half of them), so the reference is the median of
// the fast half: it stays healthy while up to half of the channels are slow.
std::vector<double> fast_half(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  v.resize((v.size() + 1) / 2);
  return v;
}

}  // namespace

ChannelAnalysis analyze_channels(const std::vector<ChannelTiming>& samples, const ChannelOptions& o) {
  ChannelAnalysis a;
  // One sample per (comm, process, channel, direction, op): a slot read in
  // several snapshots is the same proxy op until its op_seq changes.
  std::map<std::tuple<std::string, std::string, int, bool, uint64_t>, const ChannelTiming*> uniq;
  for (const auto& s : samples)
    if (!s.comm.empty() && s.stop_ns > s.start_ns) uniq.emplace(std::make_tuple(s.comm, s.proc.key(), s.channel, s.send, s.op_seq), &s);
  a.samples = static_cast<int>(uniq.size());

  std::map<std::string, std::map<uint64_t, std::map<int, std::vector<double>>>> by_op;  // comm -> op -> channel -> ms
  std::map<std::pair<std::string, int>, std::set<std::string>> endpoints;                // (comm, channel) -> processes
  std::map<std::pair<std::string, int>, std::string> proc_of_rank;                       // (comm, rank) -> process
  std::map<std::pair<std::string, int>, std::set<std::pair<int, int>>> pairs;           // (comm, channel) -> (from, to) ranks
  for (const auto& [k, s] : uniq) {
    by_op[s->comm][s->op_seq][s->channel].push_back(static_cast<double>(s->stop_ns - s->start_ns) / 1e6);
    endpoints[{s->comm, s->channel}].insert(s->proc.key());
    proc_of_rank[{s->comm, s->comm_rank}] = s->proc.key();
    if (s->peer >= 0) pairs[{s->comm, s->channel}].insert(s->send ? std::make_pair(s->comm_rank, s->peer) : std::make_pair(s->peer, s->comm_rank));
  }

  bool compared = false;
  for (const auto& [comm, ops] : by_op) {
    std::map<int, std::vector<double>> ratios, times;
    for (const auto& [seq, chans] : ops) {
      if (static_cast<int>(chans.size()) < o.min_channels) continue;
      std::vector<double> t;
      std::map<int, double> per;
      for (const auto& [c, v] : chans) t.push_back(per[c] = median(v));
      const double m = median(fast_half(t));
      if (m <= 0) continue;  // shorter than the clock's tick: not measured
      for (const auto& [c, v] : per) {
        ratios[c].push_back(v / m);
        times[c].push_back(v);
      }
    }
    std::vector<ChannelStat> stats;
    for (const auto& [c, r] : ratios) {
      ChannelStat st;
      st.comm = comm;
      st.channel = c;
      st.ops = static_cast<int>(r.size());
      st.ratio = median(r);
      st.median_ms = median(times[c]);
      const auto& e = endpoints[{comm, c}];
      st.endpoints.assign(e.begin(), e.end());
      stats.push_back(std::move(st));
    }
    std::vector<ChannelStat*> judged;
    for (auto& st : stats)
      if (st.ops >= o.min_ops) judged.push_back(&st);
    if (static_cast<int>(judged.size()) >= o.min_channels) {
      compared = true;
      std::vector<double> r;
      for (auto* st : judged) r.push_back(st->ratio);
      const auto fast = fast_half(r);
      const double med = median(fast);
      const double m = std::max(mad(fast), o.mad_floor * med);
      for (auto* st : judged) {
        st->z = m > 0 ? 0.6745 * (st->ratio - med) / m : 0;
        st->slow = st->z > o.z_threshold && st->ratio >= o.min_ratio * med;
      }
    }
    // Group tests inside this communicator: healthy channels clear their endpoints.
    std::set<std::string> cleared, left_all;
    for (auto* st : judged)
      if (!st->slow) cleared.insert(st->endpoints.begin(), st->endpoints.end());
    std::set<std::string> nics;
    std::map<std::pair<std::string, std::string>, std::vector<int>> links;
    for (auto* st : judged) {
      if (!st->slow) continue;
      std::vector<std::string> left;
      for (const auto& p : st->endpoints)
        if (!cleared.count(p)) left.push_back(p);
      left_all.insert(left.begin(), left.end());
      if (left.size() == 1) {
        nics.insert(left.front());
      } else if (left.size() == 2) {
        // Two left: named as a link only when the channel sends from one to the other.
        for (const auto& [from, to] : pairs[{comm, st->channel}]) {
          const auto pf = proc_of_rank.find({comm, from}), pt = proc_of_rank.find({comm, to});
          if (pf == proc_of_rank.end() || pt == proc_of_rank.end()) continue;
          if ((pf->second == left[0] && pt->second == left[1]) || (pf->second == left[1] && pt->second == left[0])) {
            links[{pf->second, pt->second}].push_back(st->channel);
            break;
          }
        }
      }
    }
    for (const auto& p : nics) a.nic_culprits.push_back(p);
    for (const auto& [ft, chans] : links) {
      // A link whose endpoint is already named as a NIC adds nothing.
      if (nics.count(ft.first) || nics.count(ft.second)) continue;
      a.link_culprits.push_back(ChannelLink{comm, ft.first, ft.second, chans});
    }
    for (const auto& p : left_all)
      if (!nics.count(p)) a.suspects.push_back(p);
    a.channels.insert(a.channels.end(), stats.begin(), stats.end());
  }
  std::sort(a.nic_culprits.begin(), a.nic_culprits.end());
  a.nic_culprits.erase(std::unique(a.nic_culprits.begin(), a.nic_culprits.end()), a.nic_culprits.end());
  std::sort(a.suspects.begin(), a.suspects.end());
  a.suspects.erase(std::unique(a.suspects.begin(), a.suspects.end()), a.suspects.end());
  if (a.samples > 0 && !compared)
    a.notes.push_back(fmt::format(
        "channels not compared: no communicator has {} channels with {} distinct proxy ops each (a ring file keeps the last proxy op of each "
        "channel: give several snapshots taken seconds apart)",
        o.min_channels, o.min_ops));
  return a;
}

}  // namespace ccdiag::perf
