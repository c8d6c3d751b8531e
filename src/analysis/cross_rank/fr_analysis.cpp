#include "analysis/cross_rank/fr_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/cross_rank/fr_ops.hpp"
#include "analysis/parallel/dims.hpp"

namespace ccdiag::fr {

namespace {

// A unit is what ranks must agree on: one collective, a coalesced group
// (members + closing entry), one send/recv, or one batched send/recv group.
struct Unit {
  int64_t seq = 0;
  uint32_t first = 0;       // first entry index in the dump
  uint32_t count = 0;       // entries in the unit (members + end)
  uint32_t end = kNoIndex;  // closing coalesced entry, when present
  FrState state = FrState::unknown;
  bool p2p = false;
};

struct RankGroup {
  std::vector<Unit> coll;
  std::vector<Unit> p2p;
};

struct Group {
  std::string name, desc;
  std::vector<int> members;                 // global ranks in group-rank order
  bool members_known = false;
  std::unordered_map<int, size_t> member_index;
  std::vector<int> dump_of;                 // per member: index into dumps, -1 = no dump
  std::vector<RankGroup> per;               // per member
};

struct Blocked {
  int group = -1;
  int64_t seq = 0;
  bool p2p = false;
  uint32_t entry = kNoIndex;
};

struct DumpInfo {
  bool wrapped = false;
  int64_t earliest_ns = kNoTime;
  int64_t latest_ns = kNoTime;
  Blocked blocked;                 // earliest incomplete unit, if any
  std::vector<int> group_of_pg;    // local pg index -> group
  std::vector<OpInfo> ops;         // per string index (only profiling names are parsed on use)
  std::vector<uint64_t> str_hash;  // per string index
  std::vector<uint64_t> op_hash;   // per string index: hash of the parsed op name (type comparison)
};

std::string group_label(const Group& g) { return ccdiag::group_label(g.name, g.desc); }

uint64_t mix(uint64_t h, uint64_t v) { return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)); }

int state_rank(FrState s) {
  switch (s) {
    case FrState::scheduled: return 0;
    case FrState::started: return 1;
    case FrState::completed: return 2;
    case FrState::unknown: return 0;
  }
  return 0;
}

std::string ranks_text(const std::vector<int>& r, size_t max = 16) {
  std::string s;
  // Compress runs: 16-23 instead of 16, 17, ..., 23.
  size_t shown = 0;
  for (size_t i = 0; i < r.size();) {
    size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
    if (!s.empty()) s += ", ";
    if (++shown > max) {
      s += fmt::format("... ({} ranks)", r.size());
      break;
    }
    s += j > i + 1 ? fmt::format("{}-{}", r[i], r[j]) : (j == i + 1 ? fmt::format("{}, {}", r[i], r[j]) : std::to_string(r[i]));
    i = j + 1;
  }
  return s;
}

class Analyzer {
 public:
  Analyzer(const std::vector<RankDump>& d, const FrAnalyzeOptions& o) : dumps_(d), opts_(o) {}

  FrAnalysis run() {
    out_.ranks = dumps_.size();
    // A CPU backend (gloo): "completed" comes from pg_status and means the
    // work finished, with success or with an error (a timed-out collective
    // is "completed" too). It does not prove that every member was in it.
    cpu_backend_ = std::any_of(dumps_.begin(), dumps_.end(), [](const RankDump& d) { return !d.backend.empty(); }) &&
                   std::none_of(dumps_.begin(), dumps_.end(), [](const RankDump& d) { return device_backend(d.backend); });
    build_groups();
    build_units();
    find_blocked();
    for (size_t g = 0; g < groups_.size(); ++g) {
      analyse_collectives(static_cast<int>(g));
      analyse_p2p(static_cast<int>(g));
    }
    slow_ranks();
    no_dumps();
    causal_order();
    out_.groups = groups_.size();
    return std::move(out_);
  }

 private:
  const std::vector<RankDump>& dumps_;
  const FrAnalyzeOptions& opts_;
  FrAnalysis out_;
  std::vector<Group> groups_;
  std::vector<DumpInfo> info_;
  // Root faults per group (index into out_.findings), for causal ordering.
  std::vector<std::vector<size_t>> faults_of_group_;
  // slow-rank statistics, per dump
  std::vector<std::vector<float>> lags_;
  std::vector<size_t> n_last_, n_seen_;
  std::vector<std::vector<float>> durations_;
  // compare_present's buffers, reused across seqs
  std::vector<uint32_t> ents_flat_;
  std::vector<size_t> ents_off_;
  std::vector<uint64_t> tkey_, skey_, dkey_, stkey_;
  std::vector<std::string> self_size_, self_dtype_;

  bool cpu_backend_ = false;

  const FrEntry& entry(int d, uint32_t i) const { return dumps_[static_cast<size_t>(d)].entries[i]; }
  const OpInfo& op_of(int d, const FrEntry& e) const { return info_[static_cast<size_t>(d)].ops[e.name]; }
  const std::string& name_of(int d, const FrEntry& e) const { return dumps_[static_cast<size_t>(d)].str(e.name); }

  // ---- groups -----------------------------------------------------------
  // A config that leaves out the dump's own rank is not this group's
  // (torch 2.15 gloo keeps one config under '' whatever the groups).
  static bool config_fits(const PgConfig& c, const RankDump& dump) {
    return c.ranks_known && (dump.rank < 0 || std::find(c.ranks.begin(), c.ranks.end(), dump.rank) != c.ranks.end());
  }

  void build_groups() {
    std::map<std::string, int> by_key;
    info_.resize(dumps_.size());
    // A dump without a usable config for a group takes another dump's, so
    // one group is not split into "members known" and "members unknown".
    std::map<std::string, const PgConfig*> any_cfg;
    for (const auto& dump : dumps_)
      for (const auto& c : dump.pg_configs)
        if (config_fits(c, dump)) any_cfg.emplace(c.name, &c);
    for (size_t d = 0; d < dumps_.size(); ++d) {
      const RankDump& dump = dumps_[d];
      DumpInfo& inf = info_[d];
      inf.ops.reserve(dump.strings.size());
      for (const auto& s : dump.strings) {
        inf.ops.push_back(parse_profiling_name(s));
        inf.str_hash.push_back(std::hash<std::string>{}(s));
        inf.op_hash.push_back(std::hash<std::string_view>{}(inf.ops.back().op));
      }
      inf.group_of_pg.assign(dump.pgs.size(), -1);
      for (size_t p = 0; p < dump.pgs.size(); ++p) {
        const PgRef& ref = dump.pgs[p];
        const PgConfig* cfg = nullptr;
        for (const auto& c : dump.pg_configs)
          if (c.name == ref.name && config_fits(c, dump)) cfg = &c;
        if (!cfg)
          if (auto it = any_cfg.find(ref.name); it != any_cfg.end()) cfg = it->second;
        std::string key;
        if (cfg) {
          std::vector<int> sorted = cfg->ranks;
          std::sort(sorted.begin(), sorted.end());
          key = ref.name + "|" + fmt::format("{}", fmt::join(sorted, ","));
        } else {
          key = ref.name + "|?";  // no pg_config: members are whoever has entries
        }
        auto [it, fresh] = by_key.emplace(key, static_cast<int>(groups_.size()));
        if (fresh) {
          Group g;
          g.name = ref.name;
          g.desc = cfg ? cfg->desc : ref.desc;
          if (g.desc.empty()) g.desc = ref.desc;
          if (cfg) {
            g.members = cfg->ranks;
            g.members_known = true;
          }
          groups_.push_back(std::move(g));
        }
        inf.group_of_pg[p] = it->second;
      }
    }
    for (auto& g : groups_) {
      for (size_t m = 0; m < g.members.size(); ++m) g.member_index.emplace(g.members[m], m);
    }
    // Members of groups without pg_config: the ranks that have entries in them.
    for (size_t d = 0; d < dumps_.size(); ++d)
      for (int gi : info_[d].group_of_pg) {
        Group& g = groups_[static_cast<size_t>(gi)];
        if (!g.members_known && !g.member_index.count(dumps_[d].rank)) {
          g.member_index.emplace(dumps_[d].rank, g.members.size());
          g.members.push_back(dumps_[d].rank);
        }
      }
    std::unordered_map<int, int> dump_of_rank;
    for (size_t d = 0; d < dumps_.size(); ++d) dump_of_rank.emplace(dumps_[d].rank, static_cast<int>(d));
    for (auto& g : groups_) {
      g.dump_of.assign(g.members.size(), -1);
      for (size_t m = 0; m < g.members.size(); ++m)
        if (auto it = dump_of_rank.find(g.members[m]); it != dump_of_rank.end()) g.dump_of[m] = it->second;
      g.per.resize(g.members.size());
    }
    faults_of_group_.resize(groups_.size());
  }

  // ---- units ------------------------------------------------------------
  void build_units() {
    for (size_t d = 0; d < dumps_.size(); ++d) {
      const RankDump& dump = dumps_[d];
      DumpInfo& inf = info_[d];
      out_.entries += dump.entries.size();
      if (!dump.entries.empty()) inf.wrapped = dump.entries.front().record_id > 0;
      // open unit per group: (is p2p, index in the vector)
      std::vector<std::pair<int, int64_t>> open(groups_.size(), {0, -1});
      for (uint32_t i = 0; i < dump.entries.size(); ++i) {
        const FrEntry& e = dump.entries[i];
        if (e.time_created_ns != kNoTime) {
          if (inf.earliest_ns == kNoTime || e.time_created_ns < inf.earliest_ns) inf.earliest_ns = e.time_created_ns;
          if (e.time_created_ns > inf.latest_ns) inf.latest_ns = e.time_created_ns;
        }
        if (e.pg >= inf.group_of_pg.size()) continue;
        const int gi = inf.group_of_pg[e.pg];
        Group& g = groups_[static_cast<size_t>(gi)];
        auto mit = g.member_index.find(dump.rank);
        if (mit == g.member_index.end()) continue;  // pg_config says this rank is not a member: ignore
        RankGroup& rg = g.per[mit->second];
        const OpInfo& op = inf.ops[e.name];
        const bool p2p = e.is_p2p || op.family == OpFamily::send || op.family == OpFamily::recv;
        auto& [open_p2p, open_idx] = open[static_cast<size_t>(gi)];
        Unit* cur = nullptr;
        if (open_idx >= 0) cur = open_p2p ? &rg.p2p[static_cast<size_t>(open_idx)] : &rg.coll[static_cast<size_t>(open_idx)];
        if (p2p) {
          if (cur && cur->p2p && cur->seq == e.p2p_seq && cur->end == kNoIndex) {
            ++cur->count;
          } else {
            rg.p2p.push_back(Unit{e.p2p_seq, i, 1, kNoIndex, e.state, true});
            open[static_cast<size_t>(gi)] = {1, static_cast<int64_t>(rg.p2p.size() - 1)};
          }
          continue;
        }
        if (op.family == OpFamily::coalesced_end && cur && cur->end == kNoIndex &&
            ((cur->p2p && cur->seq == e.p2p_seq) || (!cur->p2p && cur->seq == e.collective_seq))) {
          // The closing entry of a batch: its state is the group's (members stay
          // "scheduled" forever, reference §1.5 / issue #137969).
          cur->end = i;
          ++cur->count;
          cur->state = e.state;
          continue;
        }
        if (!cur || cur->p2p || cur->seq != e.collective_seq || cur->end != kNoIndex) {
          rg.coll.push_back(Unit{e.collective_seq, i, 1, op.family == OpFamily::coalesced_end ? i : kNoIndex, e.state, false});
          open[static_cast<size_t>(gi)] = {0, static_cast<int64_t>(rg.coll.size() - 1)};
        } else {
          ++cur->count;  // a member of a coalesced group (same seq)
          if (state_rank(e.state) < state_rank(cur->state)) cur->state = e.state;
        }
      }
    }
    for (auto& g : groups_)
      for (auto& rg : g.per) {
        std::stable_sort(rg.coll.begin(), rg.coll.end(), [](const Unit& a, const Unit& b) { return a.seq < b.seq; });
      }
  }

  // The earliest incomplete unit of each rank (by record order): what its CPU
  // or GPU is waiting in. Units after it are queued behind it.
  void find_blocked() {
    for (size_t gi = 0; gi < groups_.size(); ++gi) {
      const Group& g = groups_[gi];
      for (size_t m = 0; m < g.members.size(); ++m) {
        const int d = g.dump_of[m];
        if (d < 0) continue;
        Blocked& b = info_[static_cast<size_t>(d)].blocked;
        auto consider = [&](const Unit& u) {
          if (u.state == FrState::completed) return;
          if (entry(d, u.first).retired && u.state != FrState::completed) {
            // retired without completing: timed out; still what it was stuck in
          }
          if (b.entry == kNoIndex || u.first < b.entry) b = Blocked{static_cast<int>(gi), u.seq, u.p2p, u.first};
        };
        for (const auto& u : g.per[m].coll) consider(u);
        for (const auto& u : g.per[m].p2p) consider(u);
      }
    }
  }

  std::string describe_blocked(int d) const {
    const Blocked& b = info_[static_cast<size_t>(d)].blocked;
    if (b.entry == kNoIndex) return {};
    const Group& g = groups_[static_cast<size_t>(b.group)];
    return fmt::format("{} in {} {}seq {}", name_of(d, entry(d, b.entry)), group_label(g),
                       b.p2p ? "p2p " : "", b.seq);
  }

  // ---- collectives ------------------------------------------------------
  enum class Absent { present, out_of_window, not_yet_arrived, never_called };

  Absent classify_absent(const Group& g, size_t m, int64_t s, int64_t t_s) const {
    const int d = g.dump_of[m];
    const RankGroup& rg = g.per[m];
    const DumpInfo& inf = info_[static_cast<size_t>(d)];
    if (!rg.coll.empty() && s < rg.coll.front().seq) return Absent::out_of_window;
    if (rg.coll.empty() && inf.wrapped && (t_s == kNoTime || inf.earliest_ns == kNoTime || inf.earliest_ns > t_s))
      return Absent::out_of_window;
    if (inf.blocked.entry != kNoIndex) return Absent::not_yet_arrived;
    return Absent::never_called;
  }

  // Majority vote over keys; returns the ranks (indices into `keys`) outside
  // the largest class. A tie keeps the class of the lowest rank as reference.
  static std::vector<size_t> minority(const std::vector<uint64_t>& keys) {
    // The common case at scale: every rank agrees; no counting needed.
    if (std::all_of(keys.begin(), keys.end(), [&](uint64_t k) { return k == keys.front(); })) return {};
    std::unordered_map<uint64_t, size_t> count;
    for (auto k : keys) ++count[k];
    if (count.size() <= 1) return {};
    uint64_t best = keys[0];
    size_t best_n = count[best];
    for (auto& [k, n] : count)
      if (n > best_n) best = k, best_n = n;
    std::vector<size_t> out;
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] != best) out.push_back(i);
    return out;
  }

  struct Present {
    size_t m;    // member index
    int d;       // dump index
    const Unit* u;
  };

  std::string stack_of(int d, const Unit& u) const {
    for (uint32_t k = 0; k < u.count; ++k) {
      const FrEntry& e = entry(d, u.first + k);
      if (e.stack != kNoIndex) return dumps_[static_cast<size_t>(d)].stacks[e.stack];
    }
    if (u.end != kNoIndex && entry(d, u.end).stack != kNoIndex) return dumps_[static_cast<size_t>(d)].stacks[entry(d, u.end).stack];
    return {};
  }

  // Entries of a unit in order (members then end); members of a dump are
  // contiguous per group only, so walk by group.
  std::vector<uint32_t> unit_entries(int d, const Unit& u, int gi) const {
    std::vector<uint32_t> out;
    const RankDump& dump = dumps_[static_cast<size_t>(d)];
    const DumpInfo& inf = info_[static_cast<size_t>(d)];
    for (uint32_t i = u.first; i < dump.entries.size() && out.size() < u.count; ++i) {
      const FrEntry& e = dump.entries[i];
      if (e.pg < inf.group_of_pg.size() && inf.group_of_pg[e.pg] == gi) out.push_back(i);
    }
    return out;
  }

  void add_files(FrFinding& f, const std::vector<int>& dumps_idx) const {
    for (int d : dumps_idx) {
      if (f.files.size() >= 8) break;
      f.files.push_back(dumps_[static_cast<size_t>(d)].file);
    }
  }

  void analyse_collectives(int gi) {
    Group& g = groups_[static_cast<size_t>(gi)];
    const size_t M = g.members.size();
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t m = 0; m < M; ++m) {
      if (g.dump_of[m] < 0 || g.per[m].coll.empty()) continue;
      lo = std::min(lo, g.per[m].coll.front().seq);
      hi = std::max(hi, g.per[m].coll.back().seq);
    }
    if (lo > hi) return;
    std::vector<size_t> cursor(M, 0);
    std::vector<Present> present;
    std::vector<size_t> absent;
    std::vector<uint64_t> keys;
    std::vector<double> times;
    bool have_dump_for_all = std::all_of(g.dump_of.begin(), g.dump_of.end(), [](int d) { return d >= 0; });
    // Only seqs some rank has: a hostile dump's seq ids can span 2^63.
    auto next_seq = [&](int64_t cur) {
      int64_t nxt = INT64_MAX;
      for (size_t m = 0; m < M; ++m) {
        if (g.dump_of[m] < 0) continue;
        const auto& v = g.per[m].coll;
        size_t c = cursor[m];
        while (c < v.size() && v[c].seq <= cur) ++c;
        if (c < v.size()) nxt = std::min(nxt, v[c].seq);
      }
      return nxt;
    };
    for (int64_t s = lo; s != INT64_MAX && s <= hi; s = next_seq(s)) {
      present.clear();
      absent.clear();
      for (size_t m = 0; m < M; ++m) {
        const int d = g.dump_of[m];
        if (d < 0) continue;
        const auto& v = g.per[m].coll;
        size_t& c = cursor[m];
        while (c < v.size() && v[c].seq < s) ++c;
        if (c < v.size() && v[c].seq == s) present.push_back(Present{m, d, &v[c]});
        else absent.push_back(m);
      }
      if (present.empty()) continue;
      ++out_.collectives_checked;
      int64_t t_s = kNoTime;
      for (const auto& p : present) {
        const int64_t t = entry(p.d, p.u->first).time_created_ns;
        if (t != kNoTime && (t_s == kNoTime || t < t_s)) t_s = t;
      }
      std::vector<std::pair<size_t, Absent>> missing;
      std::vector<int> out_of_window;
      // A collective completed on any rank had every member in it: absent
      // ranks lost those records (ring buffer, reset epoch), they did not skip it.
      const bool completed_somewhere = !cpu_backend_ && std::any_of(present.begin(), present.end(), [](const Present& p) {
        return p.u->state == FrState::completed;
      });
      for (size_t m : absent) {
        Absent a = completed_somewhere ? Absent::out_of_window : classify_absent(g, m, s, t_s);
        if (a == Absent::out_of_window) out_of_window.push_back(g.members[m]);
        else missing.emplace_back(m, a);
      }
      if (!missing.empty()) {
        report_missing(gi, s, t_s, present, missing, out_of_window, hi);
        return;  // later seqs of this group are its consequences
      }
      if (present.size() < 2) continue;
      if (auto f = compare_present(gi, s, present)) {
        f->details["tail_seqs"] = hi - s;
        f->time_ns = t_s;
        push_fault(gi, std::move(*f));
        return;
      }
      // A CPU backend's "completed" includes a collective that failed, so the
      // last collective of every rank that dumped, with members that wrote no
      // dump, is where those members were lost (a killed rank writes none).
      if (cpu_backend_ && s == hi && !have_dump_for_all && present.size() >= 2 &&
          std::all_of(present.begin(), present.end(), [&](const Present& p) { return p.u == &g.per[p.m].coll.back(); })) {
        report_no_dump_stall(gi, s, t_s, present, hi);
        return;
      }
      // Every member entered the last collective, but one long after the
      // others: it came late (a straggler, or a timeout shorter than its
      // step), the others gave up waiting.
      if (present.size() == M && M >= 2 && report_late_arrival(gi, s, present, hi)) return;
      // All entered, all agree. None completed -> hang below the framework.
      const bool none_completed = std::none_of(present.begin(), present.end(),
                                               [](const Present& p) { return p.u->state == FrState::completed; });
      if (none_completed) {
        // A rank still waiting in an earlier op (another group, or a p2p
        // batch of this one) explains why this one cannot finish: not a hang
        // of this collective. Later seqs are consequences too.
        const bool blocked_here = std::all_of(present.begin(), present.end(), [&](const Present& p) {
          return info_[static_cast<size_t>(p.d)].blocked.entry == p.u->first;
        });
        if (blocked_here && out_of_window.empty()) {
          if (have_dump_for_all && present.size() == M) report_hang(gi, s, t_s, present, hi);
          else report_no_dump_stall(gi, s, t_s, present, hi);
        }
        return;
      }
      if (present.size() == M) slow_stats(present);
    }
  }

  // The last collective of every member, all present; one enqueued at least
  // 1 s and 10x the others' spread after the rest, and not completed
  // everywhere (a CPU backend's "completed" includes a failed one).
  bool report_late_arrival(int gi, int64_t s, const std::vector<Present>& present, int64_t hi) {
    const Group& g = groups_[static_cast<size_t>(gi)];
    if (!std::all_of(present.begin(), present.end(), [&](const Present& p) { return p.u == &g.per[p.m].coll.back(); }))
      return false;
    if (!cpu_backend_ && std::all_of(present.begin(), present.end(),
                                     [](const Present& p) { return p.u->state == FrState::completed; }))
      return false;
    std::vector<std::pair<int64_t, size_t>> t;  // (enqueue time, index in present)
    for (size_t i = 0; i < present.size(); ++i) {
      const int64_t x = entry(present[i].d, present[i].u->first).time_created_ns;
      if (x == kNoTime) return false;
      t.emplace_back(x, i);
    }
    std::sort(t.begin(), t.end());
    const int64_t lag = t.back().first - t[t.size() - 2].first;
    const int64_t spread = t[t.size() - 2].first - t.front().first;
    if (lag < 1'000'000'000 || lag < 10 * spread) return false;
    const Present& late = present[t.back().second];
    FrFinding f = new_finding("late_arrival", g);
    f.seq = s;
    f.time_ns = t.front().first;
    f.op = name_of(late.d, entry(late.d, late.u->first));
    f.ranks = {g.members[late.m]};
    f.details["lag_ms"] = static_cast<double>(lag / 1000) / 1000.0;
    f.details["others_spread_ms"] = static_cast<double>(spread / 1000) / 1000.0;
    f.details["tail_seqs"] = hi - s;
    f.details["group_size"] = g.members.size();
    f.summary = fmt::format(
        "{} seq {} ({}): rank {} entered it {:.1f} s after the other {} rank(s) (they entered within {:.1f} ms of "
        "each other) — it arrived late; the others waited for it up to their timeout",
        group_label(g), s, f.op, g.members[late.m], static_cast<double>(lag) / 1e9, present.size() - 1,
        static_cast<double>(spread) / 1e6);
    f.stack = stack_of(late.d, *late.u);
    f.stack_rank = g.members[late.m];
    add_files(f, {late.d});
    push_fault(gi, std::move(f));
    return true;
  }

  // A finding about group `g`: its kind and the group's name and description.
  static FrFinding new_finding(const std::string& kind, const Group& g) {
    FrFinding f;
    f.kind = kind;
    f.process_group = g.name;
    f.pg_desc = g.desc;
    return f;
  }

  void push_fault(int gi, FrFinding f) {
    faults_of_group_[static_cast<size_t>(gi)].push_back(out_.findings.size());
    out_.findings.push_back(std::move(f));
  }

  // ---- program order ----------------------------------------------------
  // The last entry of a unit of group gi in dump d.
  uint32_t unit_last(int d, const Unit& u, int gi) const {
    if (u.end != kNoIndex) return u.end;
    if (u.count <= 1) return u.first;
    const auto es = unit_entries(d, u, gi);
    return es.empty() ? u.first : es.back();
  }

  // Units (a coalesced batch counts once) that dump d recorded after entry
  // `from` up to and including `to` (kNoIndex: to the end of the dump).
  size_t units_after(int d, uint32_t from, uint32_t to) const {
    const auto& es = dumps_[static_cast<size_t>(d)].entries;
    const size_t end = to == kNoIndex ? es.size() : std::min<size_t>(size_t{to} + 1, es.size());
    size_t n = 0;
    uint32_t last_pg = kNoIndex;
    int64_t last_seq = -1;
    bool last_p2p = false;
    for (size_t i = size_t{from} + 1; i < end; ++i) {
      const FrEntry& e = es[i];
      const int64_t seq = e.is_p2p ? e.p2p_seq : e.collective_seq;
      if (n && e.pg == last_pg && seq == last_seq && e.is_p2p == last_p2p) continue;
      ++n;
      last_pg = e.pg, last_seq = seq, last_p2p = e.is_p2p;
    }
    return n;
  }

  // How far ahead of where a rank stopped a collective it never called lies
  // in its program: its peers issued N units after the last collective of
  // this group they share with it, up to this one; it issued K after that
  // one. N - K = 1: this is the very next thing it should have done; more:
  // something else (another group's collective) came first. Median over the
  // present ranks; nullopt without a shared earlier collective.
  std::optional<int64_t> program_distance(const Group& g, int gi, size_t m, const std::vector<Present>& present) const {
    const int dc = g.dump_of[m];
    const auto& cc = g.per[m].coll;
    if (dc < 0 || cc.empty()) return std::nullopt;
    const Unit& last = cc.back();
    const auto mine = static_cast<int64_t>(units_after(dc, unit_last(dc, last, gi), kNoIndex));
    std::vector<int64_t> ds;
    for (const auto& p : present) {
      const auto& pc = g.per[p.m].coll;
      auto it = std::lower_bound(pc.begin(), pc.end(), last.seq, [](const Unit& u, int64_t q) { return u.seq < q; });
      if (it == pc.end() || it->seq != last.seq || it->first >= p.u->first) continue;
      ds.push_back(static_cast<int64_t>(units_after(p.d, unit_last(p.d, *it, gi), p.u->first)) - mine);
    }
    if (ds.empty()) return std::nullopt;
    std::sort(ds.begin(), ds.end());
    return ds[ds.size() / 2];
  }

  // Units of other groups a member recorded between its previous collective
  // of group gi and seq s (present: up to its entry of s; absent: to the end
  // of its dump, the op it is blocked in included). nullopt: no previous one.
  std::optional<size_t> other_group_gap(const Group& g, int gi, size_t m, const Unit* at) const {
    const int d = g.dump_of[m];
    const auto& v = g.per[m].coll;
    if (d < 0) return std::nullopt;
    const Unit* prev = nullptr;
    for (const auto& u : v) {
      if (at && u.first >= at->first) break;
      prev = &u;
    }
    if (!prev) return std::nullopt;
    const size_t n = units_after(d, unit_last(d, *prev, gi), at ? at->first : kNoIndex);
    return at ? (n > 0 ? n - 1 : 0) : n;
  }

  // Sub-groups waiting on each other: the missing members of (gi, s) are
  // blocked in collectives of other groups, and most members issued such a
  // collective between the previous collective of gi and this one, while a
  // minority of the present ranks went straight from one to the next. Those
  // skipped their sub-group's collective (or issued this one on the wrong
  // group): the peer waiting for them there is the one missing here.
  bool report_group_order(int gi, int64_t s, int64_t t_s, const std::vector<Present>& present,
                          const std::vector<std::pair<size_t, Absent>>& missing, int64_t hi) {
    const Group& g = groups_[static_cast<size_t>(gi)];
    std::vector<int> straight, detoured;
    for (const auto& [m, a] : missing) {
      // Blocked in another group's collective; with a CPU backend also one
      // whose last collective (another group's) "completed": gloo marks a
      // collective that timed out completed too.
      const int d = g.dump_of[m];
      const Blocked& b = info_[static_cast<size_t>(d)].blocked;
      if (a == Absent::not_yet_arrived) {
        if (b.entry == kNoIndex || b.group == gi) return false;
      } else if (!(a == Absent::never_called && cpu_backend_)) {
        return false;
      }
      auto gap = other_group_gap(g, gi, m, nullptr);
      if (!gap || *gap == 0) return false;
      detoured.push_back(g.members[m]);
    }
    for (const auto& p : present) {
      auto gap = other_group_gap(g, gi, p.m, p.u);
      if (!gap) continue;
      (*gap == 0 ? straight : detoured).push_back(g.members[p.m]);
    }
    if (straight.empty() || straight.size() >= detoured.size()) return false;
    std::sort(straight.begin(), straight.end());
    std::sort(detoured.begin(), detoured.end());
    FrFinding f = new_finding("group_order_mismatch", g);
    f.seq = s;
    f.time_ns = t_s;
    f.op = name_of(present.front().d, entry(present.front().d, present.front().u->first));
    f.ranks = straight;
    nlohmann::json waiting = nlohmann::json::array();
    std::string waits;
    for (const auto& [m, a] : missing) {
      const int d = g.dump_of[m];
      const Blocked& b = info_[static_cast<size_t>(d)].blocked;
      // Where it waits: its blocked op, else its last entry (another group's).
      const uint32_t at = b.entry != kNoIndex ? b.entry : static_cast<uint32_t>(dumps_[static_cast<size_t>(d)].entries.size() - 1);
      const FrEntry& e = entry(d, at);
      const int bgi = e.pg < info_[static_cast<size_t>(d)].group_of_pg.size() ? info_[static_cast<size_t>(d)].group_of_pg[e.pg] : -1;
      if (bgi < 0) continue;
      const Group& bg = groups_[static_cast<size_t>(bgi)];
      const int64_t bseq = e.is_p2p ? e.p2p_seq : e.collective_seq;
      waiting.push_back({{"rank", g.members[m]}, {"process_group", bg.name}, {"pg_desc", bg.desc}, {"seq", bseq},
                         {"op", name_of(d, e)}});
      if (waits.empty())
        waits = fmt::format("rank {} waits in {} in {} seq {}", g.members[m], name_of(d, e), group_label(bg), bseq);
    }
    f.details["waiting_elsewhere"] = waiting;
    f.details["went_straight"] = straight;
    f.details["issued_another_group_first"] = detoured;
    f.details["tail_seqs"] = hi - s;
    f.details["group_size"] = g.members.size();
    f.summary = fmt::format(
        "{} seq {} ({}): rank(s) {} entered it straight after seq {}, while rank(s) {} each issued a collective "
        "on another process group in between; {} — rank(s) {} skipped that sub-group collective or issued this one "
        "on the wrong group",
        group_label(g), s, f.op, ranks_text(straight), s - 1, ranks_text(detoured), waits, ranks_text(straight));
    for (const auto& p : present)
      if (std::binary_search(straight.begin(), straight.end(), g.members[p.m])) {
        if (f.stack.empty()) {
          f.stack = stack_of(p.d, *p.u);
          f.stack_rank = g.members[p.m];
        }
        add_files(f, {p.d});
      }
    push_fault(gi, std::move(f));
    return true;
  }

  void report_missing(int gi, int64_t s, int64_t t_s, const std::vector<Present>& present,
                      const std::vector<std::pair<size_t, Absent>>& missing, const std::vector<int>& out_of_window,
                      int64_t hi) {
    if (report_group_order(gi, s, t_s, present, missing, hi)) return;
    const Group& g = groups_[static_cast<size_t>(gi)];
    FrFinding f = new_finding("missing_ranks", g);
    f.seq = s;
    f.time_ns = t_s;
    const Present& ref = present.front();
    f.op = name_of(ref.d, entry(ref.d, ref.u->first));
    std::vector<int> missing_ranks, present_ranks;
    size_t never = 0, notyet = 0;
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [m, a] : missing) {
      const int r = g.members[m];
      const int d = g.dump_of[m];
      missing_ranks.push_back(r);
      if (a == Absent::never_called) ++never;
      else ++notyet;
      if (list.size() < 64) {
        nlohmann::json x = {{"rank", r}, {"reason", a == Absent::never_called ? "never_called" : "not_yet_arrived"}};
        const auto& coll = g.per[m].coll;
        if (!coll.empty()) x["last_seq"] = coll.back().seq;
        if (a == Absent::not_yet_arrived) {
          const Blocked& b = info_[static_cast<size_t>(d)].blocked;
          const Group& bg = groups_[static_cast<size_t>(b.group)];
          x["blocked_in"] = {{"process_group", bg.name}, {"pg_desc", bg.desc}, {"seq", b.seq},
                             {"seq_kind", b.p2p ? "p2p" : "collective"}, {"op", name_of(d, entry(d, b.entry))},
                             {"state", std::string(to_string(entry(d, b.entry).state))}};
        } else {
          // Went on with other work after the others entered, or stopped issuing?
          const int64_t latest = info_[static_cast<size_t>(d)].latest_ns;
          x["kept_issuing_collectives"] = t_s != kNoTime && latest != kNoTime && latest >= t_s;
          // Its last entry: when that is a collective its peers never joined,
          // it waits there, however late it got there on the peers' clocks.
          const auto& es = dumps_[static_cast<size_t>(d)].entries;
          if (!es.empty()) {
            const FrEntry& le = es.back();
            const auto& gop = info_[static_cast<size_t>(d)].group_of_pg;
            if (le.pg < gop.size() && gop[le.pg] >= 0)
              x["last_entry"] = {{"process_group", groups_[static_cast<size_t>(gop[le.pg])].name},
                                 {"seq", le.is_p2p ? le.p2p_seq : le.collective_seq},
                                 {"seq_kind", le.is_p2p ? "p2p" : "collective"}};
          }
          if (auto pd = program_distance(g, gi, m, present)) x["program_distance"] = *pd;
        }
        list.push_back(std::move(x));
      }
    }
    for (const auto& p : present) present_ranks.push_back(g.members[p.m]);
    std::sort(missing_ranks.begin(), missing_ranks.end());
    std::sort(present_ranks.begin(), present_ranks.end());
    // Majority: the odd side is the culprit. Normally the absent ranks; when a
    // minority issued a collective the majority never called (and the
    // majority is idle, not blocked), the minority is the odd one.
    const bool odd_present = present_ranks.size() < missing_ranks.size() && notyet == 0;
    f.ranks = odd_present ? present_ranks : missing_ranks;
    f.details["missing"] = list;
    f.details["missing_count"] = missing_ranks.size();
    f.details["never_called"] = never;
    f.details["not_yet_arrived"] = notyet;
    f.details["present_count"] = present_ranks.size();
    if (present_ranks.size() <= 64) f.details["present"] = present_ranks;
    f.details["odd_side"] = odd_present ? "present" : "absent";
    f.details["out_of_window"] = out_of_window.size() <= 64 ? nlohmann::json(out_of_window) : nlohmann::json(out_of_window.size());
    f.details["tail_seqs"] = hi - s;
    f.details["group_size"] = g.members.size();
    const std::string reason = never && notyet ? "never called it / not yet arrived"
                               : never         ? "never called it"
                                               : "not yet arrived";
    if (odd_present)
      f.summary = fmt::format("{} seq {} ({}): only rank(s) {} issued it; {} rank(s) never called it",
                              group_label(g), s, f.op, ranks_text(present_ranks), missing_ranks.size());
    else
      f.summary = fmt::format("{} seq {} ({}): rank(s) {} missing ({}); {} of {} ranks entered it", group_label(g), s, f.op, ranks_text(missing_ranks), reason, present_ranks.size(), g.members.size());
    if (notyet && !never) {
      const auto& [m0, a0] = missing.front();
      f.summary += "; blocked in " + describe_blocked(g.dump_of[m0]);
    }
    // Call site: for the odd present ranks their entry; for absent ranks the
    // op they are blocked in, else where they were last seen.
    std::vector<int> dumps_idx;
    if (odd_present) {
      f.stack_rank = present.front().d >= 0 ? g.members[present.front().m] : -1;
      f.stack = stack_of(present.front().d, *present.front().u);
      for (const auto& p : present) dumps_idx.push_back(p.d);
    } else {
      const auto& [m0, a0] = missing.front();
      const int d0 = g.dump_of[m0];
      f.stack_rank = g.members[m0];
      const Blocked& b = info_[static_cast<size_t>(d0)].blocked;
      if (b.entry != kNoIndex && entry(d0, b.entry).stack != kNoIndex)
        f.stack = dumps_[static_cast<size_t>(d0)].stacks[entry(d0, b.entry).stack];
      else if (!dumps_[static_cast<size_t>(d0)].entries.empty()) {
        const auto& last = dumps_[static_cast<size_t>(d0)].entries.back();
        if (last.stack != kNoIndex) f.stack = dumps_[static_cast<size_t>(d0)].stacks[last.stack];
      }
      for (const auto& [m, a] : missing) dumps_idx.push_back(g.dump_of[m]);
    }
    add_files(f, dumps_idx);
    push_fault(gi, std::move(f));
  }

  std::optional<FrFinding> compare_present(int gi, int64_t s, const std::vector<Present>& present) {
    const Group& g = groups_[static_cast<size_t>(gi)];
    const int64_t G = static_cast<int64_t>(g.members.size());
    const size_t n = present.size();
    // Entries of each present unit, flat: ents(i) is a span (one entry for a
    // plain collective, so no allocation per rank and seq).
    ents_flat_.clear();
    ents_off_.assign(1, 0);
    for (size_t i = 0; i < n; ++i) {
      if (present[i].u->count == 1) ents_flat_.push_back(present[i].u->first);
      else
        for (uint32_t x : unit_entries(present[i].d, *present[i].u, gi)) ents_flat_.push_back(x);
      ents_off_.push_back(ents_flat_.size());
    }
    auto ents = [this](size_t i) {
      return std::span<const uint32_t>(ents_flat_.data() + ents_off_[i], ents_off_[i + 1] - ents_off_[i]);
    };
    auto& tkey = tkey_;
    auto& skey = skey_;
    auto& dkey = dkey_;
    auto& stkey = stkey_;
    tkey.assign(n, 0);
    skey.assign(n, 0);
    dkey.assign(n, 0);
    stkey.assign(n, 0);
    auto& self_size = self_size_;
    auto& self_dtype = self_dtype_;
    self_size.assign(n, std::string());
    self_dtype.assign(n, std::string());
    for (size_t i = 0; i < n; ++i) {
      const int d = present[i].d;
      const RankDump& dump = dumps_[static_cast<size_t>(d)];
      const DumpInfo& inf = info_[static_cast<size_t>(d)];
      uint64_t t = ents(i).size(), sz = 0, dt = 0;
      for (uint32_t ei : ents(i)) {
        const FrEntry& e = dump.entries[ei];
        const OpInfo& op = inf.ops[e.name];
        t = mix(t, inf.op_hash[e.name]);
        const ShapeInfo& in = dump.shape(e.in_shapes);
        const ShapeInfo& out = dump.shape(e.out_shapes);
        const bool cmp_in = op.family != OpFamily::all_to_all && op.family != OpFamily::scatter;
        const bool cmp_out = op.family != OpFamily::all_to_all && op.family != OpFamily::gather;
        sz = mix(sz, cmp_in ? in.hash : 1);
        sz = mix(sz, cmp_out ? out.hash : 2);
        if (self_size[i].empty()) {
          if (op.family == OpFamily::all_reduce && in.hash != out.hash && in.count && out.count)
            self_size[i] = fmt::format("{} input {} != output {}", op.op, in.text, out.text);
          if (op.family == OpFamily::all_gather && g.members_known && !in.first_empty && !out.first_empty &&
              out.first_numel != in.first_numel * G)
            self_size[i] = fmt::format("{} output numel {} != input numel {} x group size {}", op.op, out.first_numel,
                                       in.first_numel, G);
          if (op.family == OpFamily::reduce_scatter && g.members_known && !in.first_empty && !out.first_empty &&
              in.first_numel != out.first_numel * G)
            self_size[i] = fmt::format("{} input numel {} != output numel {} x group size {}", op.op, in.first_numel,
                                       out.first_numel, G);
        }
        const std::string& idt = dump.str(e.in_dtypes);
        const std::string& odt = dump.str(e.out_dtypes);
        const bool dt_in = op.family != OpFamily::scatter && !in.first_empty;
        const bool dt_out = op.family != OpFamily::gather && !out.first_empty;
        dt = mix(dt, dt_in ? inf.str_hash[e.in_dtypes] : 3);
        dt = mix(dt, dt_out ? inf.str_hash[e.out_dtypes] : 4);
        if (self_dtype[i].empty() && op.family != OpFamily::scatter && op.family != OpFamily::gather &&
            op.family != OpFamily::broadcast && op.family != OpFamily::coalesced_end && !idt.empty() && !odt.empty() &&
            idt != odt && dt_in && dt_out)
          self_dtype[i] = fmt::format("{} input dtype {} != output dtype {}", op.op, idt, odt);
      }
      tkey[i] = t;
      skey[i] = sz;
      dkey[i] = dt;
      stkey[i] = static_cast<uint64_t>(state_rank(present[i].u->state));
    }
    auto make = [&](const char* kind, const std::vector<size_t>& idx, const std::string& what) {
      FrFinding f = new_finding(kind, g);
      f.seq = s;
      std::vector<int> dumps_idx;
      for (size_t i : idx) {
        f.ranks.push_back(g.members[present[i].m]);
        dumps_idx.push_back(present[i].d);
      }
      std::sort(f.ranks.begin(), f.ranks.end());
      const Present& c = present[idx.front()];
      f.op = name_of(c.d, entry(c.d, c.u->first));
      f.stack = stack_of(c.d, *c.u);
      f.stack_rank = g.members[c.m];
      // What the majority did, for the message.
      std::vector<size_t> maj;
      for (size_t i = 0; i < n && maj.empty(); ++i)
        if (std::find(idx.begin(), idx.end(), i) == idx.end()) maj.push_back(i);
      auto describe = [&](size_t i) {
        const int d = present[i].d;
        const RankDump& dump = dumps_[static_cast<size_t>(d)];
        std::string s2;
        for (uint32_t ei : ents(i)) {
          const FrEntry& e = dump.entries[ei];
          if (!s2.empty()) s2 += " + ";
          s2 += fmt::format("{} in {} out {} dtypes {}/{} {}", dump.str(e.name), dump.shape(e.in_shapes).text,
                            dump.shape(e.out_shapes).text, dump.str(e.in_dtypes), dump.str(e.out_dtypes),
                            to_string(present[i].u->state));
        }
        return s2;
      };
      f.details["culprit"] = describe(idx.front());
      if (!maj.empty()) f.details["majority"] = describe(maj.front());
      f.details["culprit_count"] = idx.size();
      f.details["present_count"] = n;
      f.details["group_size"] = g.members.size();
      if (!what.empty()) f.details["detail"] = what;
      f.summary = fmt::format("{} seq {}: rank(s) {} disagree with the other {} rank(s): {}", group_label(g), s, ranks_text(f.ranks), n - idx.size(), what);
      add_files(f, dumps_idx);
      return f;
    };
    if (auto idx = minority(tkey); !idx.empty()) {
      const Present& c = present[idx.front()];
      std::vector<size_t> maj;
      for (size_t i = 0; i < n; ++i)
        if (std::find(idx.begin(), idx.end(), i) == idx.end()) {
          maj.push_back(i);
          break;
        }
      return make("type_mismatch", idx,
                  fmt::format("{} issued {}, the majority {}", ranks_text({g.members[c.m]}),
                              name_of(c.d, entry(c.d, c.u->first)),
                              maj.empty() ? std::string("?") : name_of(present[maj[0]].d, entry(present[maj[0]].d, present[maj[0]].u->first))));
    }
    std::vector<size_t> bad_self;
    for (size_t i = 0; i < n; ++i)
      if (!self_size[i].empty()) bad_self.push_back(i);
    if (!bad_self.empty() && bad_self.size() < n) return make("size_mismatch", bad_self, self_size[bad_self.front()]);
    if (auto idx = minority(skey); !idx.empty()) return make("size_mismatch", idx, "input/output sizes differ from the majority");
    // all_to_all: per-rank sizes legitimately differ; the totals must agree.
    {
      const int d0 = present[0].d;
      const FrEntry& e0 = entry(d0, ents(0).front());
      if (op_of(d0, e0).family == OpFamily::all_to_all) {
        int64_t tin = 0, tout = 0;
        std::vector<size_t> odd;
        for (size_t i = 0; i < n; ++i) {
          const FrEntry& e = entry(present[i].d, ents(i).front());
          const auto& in = dumps_[static_cast<size_t>(present[i].d)].shape(e.in_shapes);
          const auto& outs = dumps_[static_cast<size_t>(present[i].d)].shape(e.out_shapes);
          tin += in.total_numel;
          tout += outs.total_numel;
          if (in.total_numel != outs.total_numel) odd.push_back(i);
        }
        if (tin != tout) {
          if (odd.empty() || odd.size() == n) {
            odd.clear();
            for (size_t i = 0; i < n; ++i) odd.push_back(i);
          }
          return make("size_mismatch", odd, fmt::format("all_to_all totals differ: input numel {} != output numel {}", tin, tout));
        }
      }
    }
    std::vector<size_t> bad_dt;
    for (size_t i = 0; i < n; ++i)
      if (!self_dtype[i].empty()) bad_dt.push_back(i);
    if (!bad_dt.empty() && bad_dt.size() < n) return make("dtype_mismatch", bad_dt, self_dtype[bad_dt.front()]);
    if (auto idx = minority(dkey); !idx.empty()) return make("dtype_mismatch", idx, "dtypes differ from the majority");
    // A CPU backend's states only say which ranks had finished (or failed)
    // the work when they dumped: a difference is timing, not a fault.
    if (auto idx = cpu_backend_ ? std::vector<size_t>{} : minority(stkey); !idx.empty()) {
      // Some completed and some not, or (with timing) some GPUs started and
      // some did not: the ranks in the minority state are the odd ones.
      auto f = make("state_mismatch", idx, "state differs from the majority");
      f.severity = "warning";
      f.summary = fmt::format("{} seq {} ({}): rank(s) {} are in state {}, the other {} in another state",
                              group_label(g), s, f.op, ranks_text(f.ranks),
                              to_string(present[idx.front()].u->state), n - idx.size());
      return f;
    }
    return std::nullopt;
  }

  void report_hang(int gi, int64_t s, int64_t t_s, const std::vector<Present>& present, int64_t hi) {
    const Group& g = groups_[static_cast<size_t>(gi)];
    FrFinding f = new_finding("hang_no_completion", g);
    f.seq = s;
    f.time_ns = t_s;
    const Present& ref = present.front();
    f.op = name_of(ref.d, entry(ref.d, ref.u->first));
    size_t started = 0, retired = 0;
    for (const auto& p : present) {
      if (p.u->state == FrState::started) ++started;
      if (entry(p.d, p.u->end != kNoIndex ? p.u->end : p.u->first).retired) ++retired;
    }
    // Every rank is a participant; the culprit is below the framework. Name
    // all ranks (bounded) so the lower layers can be checked on each.
    for (const auto& p : present) f.ranks.push_back(g.members[p.m]);
    std::sort(f.ranks.begin(), f.ranks.end());
    f.details["started"] = started;
    f.details["scheduled"] = present.size() - started;
    f.details["timed_out"] = retired;
    f.details["group_size"] = g.members.size();
    f.details["tail_seqs"] = hi - s;
    const std::string& backend = dumps_[static_cast<size_t>(ref.d)].backend;
    if (!backend.empty() && !device_backend(backend)) {
      // A CPU backend (gloo) has no device, no "started" state and no RDMA:
      // every member is inside, so the wait is in its TCP transport or on a
      // peer process that stopped answering without leaving the collective.
      f.details["backend"] = backend;
      f.summary = fmt::format(
          "{} seq {} ({}): all {} ranks entered it and none completed — {} records no device "
          "progress; the wait is in its TCP transport or a peer process that stopped answering",
          group_label(g), s, f.op, present.size(), backend);
    } else {
      f.summary = fmt::format(
          "{} seq {} ({}): all {} ranks entered it and none completed ({} started on the GPU) — the "
          "hang is below the framework (NCCL, transport or hardware)",
          group_label(g), s, f.op, present.size(), started);
    }
    f.stack = stack_of(ref.d, *ref.u);
    f.stack_rank = g.members[ref.m];
    add_files(f, {ref.d});
    push_fault(gi, std::move(f));
  }

  // Every rank that wrote a dump waits in this collective; the members that
  // wrote none are the suspects (a crashed process writes no dump).
  void report_no_dump_stall(int gi, int64_t s, int64_t t_s, const std::vector<Present>& present, int64_t hi) {
    const Group& g = groups_[static_cast<size_t>(gi)];
    FrFinding f = new_finding("missing_ranks", g);
    f.seq = s;
    f.time_ns = t_s;
    f.op = name_of(present.front().d, entry(present.front().d, present.front().u->first));
    nlohmann::json list = nlohmann::json::array();
    for (size_t m = 0; m < g.members.size(); ++m)
      if (g.dump_of[m] < 0) {
        f.ranks.push_back(g.members[m]);
        if (list.size() < 64) list.push_back({{"rank", g.members[m]}, {"reason", "no_dump"}});
      }
    f.details["missing"] = list;
    f.details["missing_count"] = f.ranks.size();
    f.details["no_dump"] = f.ranks.size();
    f.details["never_called"] = 0;
    f.details["not_yet_arrived"] = 0;
    f.details["present_count"] = present.size();
    f.details["odd_side"] = "absent";
    f.details["tail_seqs"] = hi - s;
    f.details["group_size"] = g.members.size();
    f.summary = fmt::format("{} seq {} ({}): every rank that wrote a dump ({}) {} it; rank(s) {} "
                            "wrote no dump (crashed, killed, or cut off from the store?)",
                            group_label(g), s, f.op, present.size(),
                            cpu_backend_ ? "ended in" : "waits in", ranks_text(f.ranks));
    f.stack = stack_of(present.front().d, *present.front().u);
    f.stack_rank = g.members[present.front().m];
    add_files(f, {present.front().d});
    push_fault(gi, std::move(f));
  }

  // ---- p2p --------------------------------------------------------------
  struct P2pOp {
    int d;
    uint32_t entry;
    const Unit* u;
    int64_t time;
    uint64_t size_hash;
  };

  void analyse_p2p(int gi) {
    const Group& g = groups_[static_cast<size_t>(gi)];
    if (!faults_of_group_[static_cast<size_t>(gi)].empty()) return;  // collectives already explain this group
    std::map<std::pair<int, int>, std::pair<std::vector<P2pOp>, std::vector<P2pOp>>> pairs;  // (src,dst) -> sends, recvs
    bool any = false;
    for (size_t m = 0; m < g.members.size(); ++m) {
      const int d = g.dump_of[m];
      if (d < 0) continue;
      for (const Unit& u : g.per[m].p2p) {
        any = true;
        for (uint32_t ei : (u.count == 1 ? std::vector<uint32_t>{u.first} : unit_entries(d, u, gi))) {
          const FrEntry& e = entry(d, ei);
          const OpInfo& op = op_of(d, e);
          if (op.family != OpFamily::send && op.family != OpFamily::recv) continue;
          auto to_global = [&](int local) {
            if (g.members_known) return local >= 0 && static_cast<size_t>(local) < g.members.size() ? g.members[static_cast<size_t>(local)] : -1;
            return local;
          };
          const int src = to_global(op.peer_src), dst = to_global(op.peer_dst);
          if (src < 0 || dst < 0) continue;
          const auto& shp = dumps_[static_cast<size_t>(d)].shape(e.in_shapes);
          P2pOp p{d, ei, &u, e.time_created_ns, shp.hash};
          if (op.family == OpFamily::send) pairs[{src, dst}].first.push_back(p);
          else pairs[{src, dst}].second.push_back(p);
        }
      }
    }
    if (!any) return;
    std::unordered_map<int, int> dump_of_rank;
    for (size_t m = 0; m < g.members.size(); ++m) dump_of_rank[g.members[m]] = g.dump_of[m];
    std::optional<FrFinding> first;
    std::vector<const P2pOp*> pending_matched;
    for (auto& [pr, sr] : pairs) {
      auto& [sends, recvs] = sr;
      const int src = pr.first, dst = pr.second;
      auto split = [](const std::vector<P2pOp>& v, std::vector<const P2pOp*>& done, std::vector<const P2pOp*>& pend) {
        for (const auto& p : v) (p.u->state == FrState::completed ? done : pend).push_back(&p);
      };
      std::vector<const P2pOp*> sd, sp, rd, rp;
      split(sends, sd, sp);
      split(recvs, rd, rp);
      const bool have_src = dump_of_rank.count(src) && dump_of_rank[src] >= 0;
      const bool have_dst = dump_of_rank.count(dst) && dump_of_rank[dst] >= 0;
      if (!have_src || !have_dst) continue;
      auto fault = [&](const char* kind, const P2pOp& at, int culprit, const std::string& what) {
        if (first && first->time_ns != kNoTime && at.time != kNoTime && first->time_ns <= at.time) return;
        FrFinding f = new_finding(kind, g);
        f.seq_kind = "p2p";
        f.seq = entry(at.d, at.entry).p2p_seq;
        f.time_ns = at.time;
        f.op = name_of(at.d, entry(at.d, at.entry));
        f.ranks = {culprit};
        f.details["src"] = src;
        f.details["dst"] = dst;
        f.details["detail"] = what;
        const int cd = dump_of_rank[culprit];
        if (info_[static_cast<size_t>(cd)].blocked.entry != kNoIndex)
          f.details["culprit_blocked_in"] = describe_blocked(cd);
        f.summary = fmt::format("{} p2p seq {} ({} on rank {}): {}", group_label(g), *f.seq, f.op,
                                dumps_[static_cast<size_t>(at.d)].rank, what);
        if (entry(at.d, at.entry).stack != kNoIndex) {
          f.stack = dumps_[static_cast<size_t>(at.d)].stacks[entry(at.d, at.entry).stack];
          f.stack_rank = dumps_[static_cast<size_t>(at.d)].rank;
        }
        add_files(f, {cd, at.d});
        first = std::move(f);
      };
      // Completed pairs, newest backwards: sizes must agree.
      for (size_t k = 0; k < std::min(sd.size(), rd.size()); ++k) {
        const P2pOp& a = *sd[sd.size() - 1 - k];
        const P2pOp& b = *rd[rd.size() - 1 - k];
        if (a.size_hash != b.size_hash) {
          fault("size_mismatch", a, dst, fmt::format("send {}->{} of {} does not match the recv of {}", src, dst,
                                                     dumps_[static_cast<size_t>(a.d)].shape(entry(a.d, a.entry).in_shapes).text,
                                                     dumps_[static_cast<size_t>(b.d)].shape(entry(b.d, b.entry).in_shapes).text));
          break;
        }
      }
      // Pending pairs, oldest forwards; the surplus is unmatched.
      const size_t np = std::min(sp.size(), rp.size());
      for (size_t k = 0; k < np; ++k) pending_matched.push_back(sp[k]);
      if (sp.size() > np) {
        const int cd = dump_of_rank[dst];
        const DumpInfo& inf = info_[static_cast<size_t>(cd)];
        const P2pOp& a = *sp[np];
        if (!(inf.wrapped && a.time != kNoTime && inf.earliest_ns > a.time))
          fault("missing_ranks", a, dst, fmt::format("rank {} has not posted the matching recv from {}", dst, src));
      }
      if (rp.size() > np) {
        const int cd = dump_of_rank[src];
        const DumpInfo& inf = info_[static_cast<size_t>(cd)];
        const P2pOp& b = *rp[np];
        if (!(inf.wrapped && b.time != kNoTime && inf.earliest_ns > b.time))
          fault("missing_ranks", b, src, fmt::format("rank {} has not posted the matching send to {}", src, dst));
      }
    }
    if (first) {
      first->details["missing"] = nlohmann::json::array();
      push_fault(gi, std::move(*first));
      return;
    }
    if (!pending_matched.empty()) {
      // Every pending send has its recv and none completed: the transfer itself hangs.
      const P2pOp* a = *std::min_element(pending_matched.begin(), pending_matched.end(),
                                         [](const P2pOp* x, const P2pOp* y) { return x->time < y->time; });
      bool all_pending_old = true;  // a healthy dump taken mid-step also has pending pairs
      for (const auto* p : pending_matched)
        if (p->u->state == FrState::completed) all_pending_old = false;
      const bool any_timed_out = std::any_of(pending_matched.begin(), pending_matched.end(), [&](const P2pOp* p) {
        return entry(p->d, p->u->end != kNoIndex ? p->u->end : p->u->first).retired;
      });
      if (all_pending_old && any_timed_out) {
        FrFinding f = new_finding("hang_no_completion", g);
        f.seq_kind = "p2p";
        f.seq = entry(a->d, a->entry).p2p_seq;
        f.time_ns = a->time;
        f.op = name_of(a->d, entry(a->d, a->entry));
        std::set<int> rs;
        for (const auto* p : pending_matched) rs.insert(dumps_[static_cast<size_t>(p->d)].rank);
        f.ranks.assign(rs.begin(), rs.end());
        f.summary = fmt::format("{} p2p seq {}: every pending send has its matching recv and none "
                                "completed — the transfer hangs below the framework",
                                group_label(g), *f.seq);
        add_files(f, {a->d});
        push_fault(gi, std::move(f));
      }
    }
  }

  // ---- slow ranks -------------------------------------------------------
  void slow_stats(const std::vector<Present>& present) {
    if (lags_.empty()) {
      lags_.resize(dumps_.size());
      n_last_.assign(dumps_.size(), 0);
      n_seen_.assign(dumps_.size(), 0);
      durations_.resize(dumps_.size());
    }
    static thread_local std::vector<int64_t> ts;
    ts.clear();
    for (const auto& p : present) {
      const int64_t t = entry(p.d, p.u->first).time_created_ns;
      if (t == kNoTime) return;
      ts.push_back(t);
    }
    std::vector<int64_t> sorted = ts;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<ptrdiff_t>(sorted.size() / 2), sorted.end());
    const int64_t median = sorted[sorted.size() / 2];
    const int64_t mx = *std::max_element(ts.begin(), ts.end());
    size_t n_at_max = 0;
    for (auto t : ts) n_at_max += t == mx;
    for (size_t i = 0; i < present.size(); ++i) {
      const auto d = static_cast<size_t>(present[i].d);
      lags_[d].push_back(static_cast<float>(static_cast<double>(ts[i] - median) / 1e6));
      ++n_seen_[d];
      if (ts[i] == mx && n_at_max == 1) ++n_last_[d];
      const FrEntry& e = entry(present[i].d, present[i].u->end != kNoIndex ? present[i].u->end : present[i].u->first);
      if (!std::isnan(e.duration_ms)) durations_[d].push_back(e.duration_ms);
    }
  }

  static double median_of(std::vector<float> v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  }
  static double quantile(std::vector<float> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
  }

  void slow_ranks() {
    if (lags_.empty()) return;
    std::vector<double> med(dumps_.size(), 0.0);
    std::vector<float> all_meds;
    for (size_t d = 0; d < dumps_.size(); ++d)
      if (n_seen_[d] >= opts_.slow_min_collectives) {
        med[d] = median_of(lags_[d]);
        all_meds.push_back(static_cast<float>(std::abs(med[d])));
      }
    if (all_meds.size() < 2) return;
    const double typical = quantile(all_meds, 0.75);
    std::vector<size_t> slow;
    for (size_t d = 0; d < dumps_.size(); ++d) {
      if (n_seen_[d] < opts_.slow_min_collectives) continue;
      const double frac_last = static_cast<double>(n_last_[d]) / static_cast<double>(n_seen_[d]);
      if (med[d] >= opts_.slow_min_lag_ms && med[d] >= 4.0 * typical && frac_last >= opts_.slow_min_last_fraction)
        slow.push_back(d);
    }
    if (slow.empty() || slow.size() * 4 > all_meds.size() + 3) return;  // many "slow" ranks: not a straggler pattern
    std::sort(slow.begin(), slow.end(), [&](size_t a, size_t b) { return med[a] > med[b]; });
    FrFinding f;
    f.kind = "slow_rank";
    f.severity = "warning";
    f.seq_kind = "collective";
    nlohmann::json stats = nlohmann::json::array();
    std::vector<float> other_durs;
    for (size_t d = 0; d < dumps_.size(); ++d)
      if (std::find(slow.begin(), slow.end(), d) == slow.end())
        other_durs.insert(other_durs.end(), durations_[d].begin(), durations_[d].end());
    for (size_t d : slow) {
      f.ranks.push_back(dumps_[d].rank);
      nlohmann::json st = {{"rank", dumps_[d].rank},
                           {"collectives", n_seen_[d]},
                           {"times_last", n_last_[d]},
                           {"fraction_last", std::round(1000.0 * static_cast<double>(n_last_[d]) / static_cast<double>(n_seen_[d])) / 1000.0},
                           {"median_lag_ms", std::round(med[d] * 1000.0) / 1000.0},
                           {"p90_lag_ms", std::round(quantile(lags_[d], 0.9) * 1000.0) / 1000.0},
                           {"mean_lag_ms", 0.0}};
      double sum = 0;
      for (float x : lags_[d]) sum += x;
      st["mean_lag_ms"] = std::round(sum / static_cast<double>(lags_[d].size()) * 1000.0) / 1000.0;
      if (!durations_[d].empty() && !other_durs.empty()) {
        st["median_duration_ms"] = median_of(durations_[d]);
        st["others_median_duration_ms"] = median_of(other_durs);
      }
      if (!dumps_[d].host.empty()) st["host"] = dumps_[d].host;
      stats.push_back(std::move(st));
      add_files(f, {static_cast<int>(d)});
    }
    std::sort(f.ranks.begin(), f.ranks.end());
    // A "missing" rank that is also consistently late has most likely not
    // arrived yet rather than skipped the collective.
    for (auto& mf : out_.findings) {
      if (mf.kind != "missing_ranks" || !mf.details.contains("missing")) continue;
      for (auto& x : mf.details["missing"]) {
        const int r = x["rank"].get<int>();
        if (x["reason"] == "never_called" && std::binary_search(f.ranks.begin(), f.ranks.end(), r)) {
          x["reason"] = "slow_not_arrived";
          mf.details["never_called"] = mf.details["never_called"].get<size_t>() - 1;
          mf.details["slow_not_arrived"] = mf.details.value("slow_not_arrived", size_t{0}) + 1;
          mf.summary += fmt::format("; rank {} is consistently late (slow_rank): it has likely not arrived yet", r);
        }
      }
    }
    f.details["stats"] = stats;
    f.details["others_p75_abs_median_lag_ms"] = std::round(typical * 1000.0) / 1000.0;
    f.details["method"] = "enqueue time (time_created_ns) minus the median over the group, per collective where every member entered";
    const auto& s0 = stats.front();
    f.summary = fmt::format("rank(s) {} enqueue collectives late: rank {} is last in {} of {} collectives, median lag {:.1f} ms "
                            "(others within {:.1f} ms)",
                            ranks_text(f.ranks), s0["rank"].get<int>(), s0["times_last"].get<size_t>(),
                            s0["collectives"].get<size_t>(), s0["median_lag_ms"].get<double>(), typical);
    out_.findings.push_back(std::move(f));
  }

  // ---- members without a dump -------------------------------------------
  void no_dumps() {
    std::set<int> none;
    for (const auto& g : groups_)
      for (size_t m = 0; m < g.members.size(); ++m)
        if (g.dump_of[m] < 0) none.insert(g.members[m]);
    if (none.empty()) return;
    FrFinding f;
    f.kind = "no_dump";
    f.severity = "warning";
    f.ranks.assign(none.begin(), none.end());
    f.summary = fmt::format("no dump from rank(s) {}: a crashed process, or one cut off from the store, writes none; "
                            "collectives they belong to cannot be fully checked",
                            ranks_text(f.ranks));
    f.details["count"] = none.size();
    out_.findings.push_back(std::move(f));
  }

  // ---- causal order -----------------------------------------------------
  static std::optional<int64_t> distance_of(const FrFinding& f, int r) {
    if (!f.details.contains("missing")) return std::nullopt;
    for (const auto& x : f.details["missing"])
      if (x.value("rank", -1) == r && x.contains("program_distance")) return x["program_distance"].get<int64_t>();
    return std::nullopt;
  }

  void causal_order() {
    auto& F = out_.findings;
    std::vector<int> cause(F.size(), -1);
    // group index of each root fault
    std::vector<int> group_of(F.size(), -1);
    for (size_t gi = 0; gi < faults_of_group_.size(); ++gi)
      for (size_t fi : faults_of_group_[gi]) group_of[fi] = static_cast<int>(gi);
    for (size_t fi = 0; fi < F.size(); ++fi) {
      if (F[fi].kind != "missing_ranks" || group_of[fi] < 0 || !F[fi].details.contains("missing")) continue;
      const Group& g = groups_[static_cast<size_t>(group_of[fi])];
      const auto& missing = F[fi].details["missing"];
      if (missing.empty()) continue;
      int explained_by = -1;
      bool all = true;
      for (const auto& x : missing) {
        const int r = x["rank"].get<int>();
        int by = -1;
        // Blocked in another group's fault?
        if (x.contains("blocked_in")) {
          const auto& b = x["blocked_in"];
          for (size_t fj = 0; fj < F.size(); ++fj) {
            if (fj == fi || group_of[fj] < 0 || group_of[fj] == group_of[fi]) continue;
            const Group& h = groups_[static_cast<size_t>(group_of[fj])];
            if (h.name == b["process_group"].get<std::string>() && F[fj].seq && *F[fj].seq <= b["seq"].get<int64_t>() &&
                F[fj].seq_kind == b["seq_kind"].get<std::string>())
              by = static_cast<int>(fj);
          }
        }
        // Or itself the culprit of another group's fault that comes first:
        // in the rank's own program order when both faults say how far
        // ahead of where it stopped they lie (a rank that stopped misses
        // its next collective first, whatever the peers' clocks say), else
        // by enqueue time.
        if (by < 0)
          for (size_t fj = 0; fj < F.size(); ++fj) {
            if (fj == fi || group_of[fj] < 0 || group_of[fj] == group_of[fi]) continue;
            if (std::find(F[fj].ranks.begin(), F[fj].ranks.end(), r) == F[fj].ranks.end()) continue;
            const auto di = distance_of(F[fi], r), dj = distance_of(F[fj], r);
            const bool first = di && dj && *di != *dj
                                   ? *dj < *di
                                   : F[fj].time_ns == kNoTime || F[fi].time_ns == kNoTime || F[fj].time_ns <= F[fi].time_ns;
            if (first) by = static_cast<int>(fj);
          }
        // Or waiting in another group's hung collective: it entered that one
        // (its peers never came), so it never reached this call. A CPU
        // backend marks the timed-out wait completed, so no blocked_in says so.
        // "Kept issuing" is read on the peers' clocks: a rank that reached
        // its last, hung collective a moment after a peer entered this one
        // still never issued anything after it, so its last entry decides.
        if (by < 0 && x.value("reason", "") == "never_called")
          for (size_t fj = 0; fj < F.size(); ++fj) {
            if (fj == fi || group_of[fj] < 0 || group_of[fj] == group_of[fi] || F[fj].kind != "missing_ranks") continue;
            if (!F[fj].details.contains("present")) continue;
            if (x.value("kept_issuing_collectives", false)) {
              const Group& h = groups_[static_cast<size_t>(group_of[fj])];
              const auto le = x.find("last_entry");
              if (le == x.end() || !F[fj].seq || (*le)["process_group"].get<std::string>() != h.name ||
                  (*le)["seq"].get<int64_t>() != *F[fj].seq || (*le)["seq_kind"].get<std::string>() != F[fj].seq_kind)
                continue;
            }
            const auto& in = F[fj].details["present"];
            if (std::find(in.begin(), in.end(), r) == in.end()) continue;
            if (std::find(F[fj].ranks.begin(), F[fj].ranks.end(), r) != F[fj].ranks.end()) continue;
            if (by < 0 || F[fj].time_ns < F[static_cast<size_t>(by)].time_ns) by = static_cast<int>(fj);
          }
        if (by < 0) {
          all = false;
          break;
        }
        if (explained_by < 0 || F[static_cast<size_t>(by)].time_ns < F[static_cast<size_t>(explained_by)].time_ns) explained_by = by;
      }
      (void)g;
      if (all && explained_by >= 0) cause[fi] = explained_by;
    }
    // Break cycles: a finding cannot be a cascade of its own cascade.
    for (size_t fi = 0; fi < F.size(); ++fi)
      if (cause[fi] >= 0 && cause[static_cast<size_t>(cause[fi])] == static_cast<int>(fi)) {
        if (F[fi].time_ns <= F[static_cast<size_t>(cause[fi])].time_ns) cause[fi] = -1;
      }
    for (size_t fi = 0; fi < F.size(); ++fi) {
      if (cause[fi] < 0) continue;
      // Follow the chain to its root.
      int root = cause[fi];
      for (int hops = 0; hops < 16 && cause[static_cast<size_t>(root)] >= 0; ++hops) root = cause[static_cast<size_t>(root)];
      const FrFinding& r = F[static_cast<size_t>(root)];
      F[fi].caused_by = fmt::format("process group {} {}seq {}", r.process_group, r.seq_kind == "p2p" ? "p2p " : "",
                                    r.seq ? std::to_string(*r.seq) : std::string("?"));
      F[fi].severity = "warning";
      F[fi].summary += fmt::format(" — a consequence of {} ({})", *F[fi].caused_by, r.kind);
    }
    // Roots first (earliest fault first), then cascades, then context-like kinds.
    auto rank_of = [](const FrFinding& f) {
      if (f.caused_by) return 2;
      if (f.kind == "slow_rank" || f.kind == "no_dump") return 1;
      return 0;
    };
    std::stable_sort(F.begin(), F.end(), [&](const FrFinding& a, const FrFinding& b) {
      const int ra = rank_of(a), rb = rank_of(b);
      if (ra != rb) return ra < rb;
      const int64_t ta = a.time_ns == kNoTime ? INT64_MAX : a.time_ns;
      const int64_t tb = b.time_ns == kNoTime ? INT64_MAX : b.time_ns;
      return ta < tb;
    });
  }
};

}  // namespace

FrAnalysis analyze_fr(const std::vector<RankDump>& dumps, const FrAnalyzeOptions& opts) {
  Analyzer a(dumps, opts);
  FrAnalysis out = a.run();
  // Version skew: fr_trace refuses it; we note it and go on (fields are read defensively).
  std::set<std::string> versions;
  for (const auto& d : dumps) versions.insert(d.version.empty() ? "(none)" : d.version);
  if (versions.size() > 1) out.notes.push_back(fmt::format("dumps carry different format versions: {}", fmt::join(versions, ", ")));
  std::set<std::string> backends;
  size_t derived = 0;
  for (const auto& d : dumps) {
    if (!d.backend.empty()) backends.insert(d.backend);
    derived += d.states_derived;
  }
  // Findings of a CPU-only job say so: the supports then leave GPU, NVLink
  // and RDMA causes out (fr_findings.cpp).
  if (!backends.empty() && std::none_of(backends.begin(), backends.end(), [](const std::string& b) { return device_backend(b); }))
    for (auto& f : out.findings) f.details["backend"] = *backends.begin();
  for (const auto& b : backends)
    if (!device_backend(b))
      out.notes.push_back(fmt::format("backend {}: entries stay \"scheduled\" (no device progress is recorded); "
                                      "{} entries taken as completed from pg_status",
                                      b, derived));
  return out;
}

std::optional<Error> check_same_job(const std::vector<RankDump>& dumps) {
  const RankDump* ref = nullptr;
  const PgConfig* ref_cfg = nullptr;
  for (const auto& d : dumps) {
    for (const auto& c : d.pg_configs) {
      if (c.name != "0" || !c.ranks_known) continue;
      if (!ref) {
        ref = &d;
        ref_cfg = &c;
      } else if (c.ranks != ref_cfg->ranks) {
        return make_error(fmt::format("default process group has {} ranks here but {} in {}: dumps from two different "
                                      "jobs are mixed",
                                      c.ranks.size(), ref_cfg->ranks.size(), ref->file),
                          d.file, "pass the dumps of one job (use --prefix or a directory per job)");
      }
    }
  }
  return std::nullopt;
}

}  // namespace ccdiag::fr
