#include "collectors/nccl/flight_analysis.hpp"
#include "collectors/nccl/stuck_state.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

// Weights are likelihood ratios on the scale the other layers use (Xid 79:
// 200; Xid 46: 20): a recorder state names the layer firmly, the cause within
// it less so (a SendWait says "network", not which cable).

namespace ccdiag::nccl {

namespace {

constexpr int kSendGpuWait = 8, kSendWait = 9, kRecvWait = 10, kRecvFlushWait = 11, kRecvGpuWait = 12,
              kSendPeerWait = 20, kStepDone = 100;

double age(uint64_t now, uint64_t t) { return (t == 0 || now < t) ? 0.0 : static_cast<double>(now - t) / 1e9; }

// An op is complete when its proxy work finished, or (intra-node, no proxy
// work) its kernel stopped on every channel it started on.
bool op_complete(const FrOp& o) {
  if (o.state == "done") return true;
  return o.proxy_total == 0 && o.kernel_started > 0 && o.kernel_stopped >= o.kernel_started;
}

// The oldest op that is enqueued but not complete, ignoring ops older than a
// completed one (the GPU stream runs them in order).
std::optional<FrOp> op_in_flight(const FrSnapshot& s) {
  size_t first = 0;
  for (size_t i = 0; i < s.ops.size(); ++i)
    if (op_complete(s.ops[i])) first = i + 1;
  for (size_t i = first; i < s.ops.size(); ++i)
    if (!op_complete(s.ops[i])) return s.ops[i];
  return std::nullopt;
}

// A channel record belongs to the op by ring generation (seq numbers are per
// function: AllGather #10 and AllReduce #10 are different ops). PXN records
// have no known parent and are attributed to the op in flight.
bool belongs(const FrChannel& c, const FrOp& op) {
  if (c.op_gen != 0) return c.op_gen == op.ticket + 1;
  return !c.op_seq || *c.op_seq == op.seq;
}

std::string layer_of(const std::string& where) {
  if (where == "not_enqueued") return "framework";
  if (where == "proxy_stalled" || where == "kernel_not_started") return "nccl";
  if (where == "gpu_wait" || where == "flush_wait") return "hardware";
  if (where == "network_wait") return "transport";
  return "";
}

bool is_terminal(const std::string& where) { return !layer_of(where).empty(); }

}  // namespace

std::vector<FrCommAnalysis> analyze_flight(const std::vector<FrSnapshot>& snaps, uint64_t now_ns,
                                           double stuck_after_s) {
  std::map<uint64_t, std::vector<const FrSnapshot*>> by_comm;
  for (const auto& s : snaps) by_comm[s.comm_hash].push_back(&s);

  std::vector<FrCommAnalysis> out;
  for (auto& [hash, list] : by_comm) {
    FrCommAnalysis a;
    a.comm_hash = hash;
    // The newest file of a rank wins (a relaunched job reuses comm hashes only by accident).
    std::map<int, const FrSnapshot*> by_rank;
    for (const auto* s : list) {
      a.nranks = std::max(a.nranks, s->nranks);
      if (a.comm_name.empty()) a.comm_name = s->comm_name;
      auto& slot = by_rank[s->rank];
      if (!slot || slot->created_ns < s->created_ns) slot = s;
    }
    // The op the others are in: the lowest in-flight coll among ranks.
    std::optional<FrOp> common;
    for (auto& [r, s] : by_rank) {
      auto op = op_in_flight(*s);
      if (op && (!common || (op->func_index == common->func_index && op->seq < common->seq))) common = op;
    }

    // Ranks listed: those with a file, and every rank of small comms (so a
    // missing file shows). Large comms list only what was read plus the peers
    // somebody waits on (added below), not thousands of "no_file" rows.
    std::set<int> wanted;
    for (auto& [r, s] : by_rank) wanted.insert(r);
    if (a.nranks > 0 && a.nranks <= 256)
      for (int r = 0; r < a.nranks; ++r) wanted.insert(r);
    for (int r : wanted) {
      FrRankState st;
      st.rank = r;
      auto it = by_rank.find(r);
      if (it == by_rank.end()) {
        st.where = "no_file";
        st.detail = "no flight-recorder file for this rank (other host, plugin not loaded, or not collected)";
        a.ranks.push_back(std::move(st));
        continue;
      }
      const FrSnapshot& s = *it->second;
      st.has_file = true;
      st.pid = s.pid;
      st.host = s.host;
      st.source = s.source;
      st.heartbeat_age_s = s.heartbeat_ns ? age(now_ns, s.heartbeat_ns) : -1;
      st.op = op_in_flight(s);
      if (!st.op) {
        if (common && common->kind == "coll" && s.last_seq[common->func_index] <= common->seq) {
          st.where = "not_enqueued";
          st.detail = fmt::format("has not enqueued {} seq {} (launched up to {}); the others wait for it",
                                  common->func, common->seq, s.last_seq[common->func_index]);
        } else {
          st.where = "idle";
          st.detail = "nothing in flight";
        }
        a.ranks.push_back(std::move(st));
        continue;
      }
      const FrOp& op = *st.op;
      st.op_age_s = age(now_ns, op.enqueued_ns ? op.enqueued_ns : op.start_ns);
      for (const auto& c : s.channels) {
        if (!c.active() || !belongs(c, op)) continue;
        if (c.step_state == kStepDone && c.steps_done >= c.n_steps) continue;
        FrWait w;
        w.channel = c.channel;
        w.direction = c.is_send ? "send" : "recv";
        w.peer = c.peer;
        w.state = step_state_name(c.step_state);
        w.step = c.last_step;
        w.age_s = age(now_ns, c.step_ns);
        st.waits.push_back(std::move(w));
      }
      bool has_kernel = op.kernel_started > 0;
      bool proxy_quiet = op.proxy_total == 0 && !has_kernel;
      const bool old = st.op_age_s >= stuck_after_s;
      auto find_state = [&](int state) -> const FrWait* {
        for (const auto& w : st.waits)
          if (w.state == step_state_name(state) && w.age_s >= stuck_after_s) return &w;
        return nullptr;
      };
      if (proxy_quiet && old && op.enqueued_ns != 0 && s.heartbeat_ns <= op.enqueued_ns) {
        st.where = "proxy_stalled";
        st.detail = fmt::format("enqueued {} seq {} {:.1f}s ago; its proxy thread has emitted nothing since (last "
                                "proxy event {:.1f}s ago)",
                                op.func, op.seq, st.op_age_s, st.heartbeat_age_s);
      } else if (proxy_quiet && old && op.enqueued_ns != 0) {
        st.where = "kernel_not_started";
        st.detail = fmt::format("enqueued {} seq {} {:.1f}s ago but its kernel never started on any channel "
                                "(proxy thread alive)",
                                op.func, op.seq, st.op_age_s);
      } else if (const FrWait* w = find_state(kSendWait)) {
        // First: an isend posted and never completed is the network's, and it
        // explains GPU waits on this and other ranks through backpressure.
        st.where = "network_wait";
        st.waits_on = w->peer;
        st.detail = fmt::format("{} seq {}: channel {} send to rank {} posted and not completed by the network "
                                "(SendWait) for {:.1f}s",
                                op.func, op.seq, w->channel, w->peer, w->age_s);
      } else if (const FrWait* w = find_state(kRecvFlushWait)) {
        st.where = "flush_wait";
        st.detail = fmt::format("{} seq {}: channel {} recv from rank {} stuck in RecvFlushWait (GPUDirect flush) "
                                "for {:.1f}s",
                                op.func, op.seq, w->channel, w->peer, w->age_s);
      } else if (const FrWait* w = find_state(kSendGpuWait) ? find_state(kSendGpuWait) : find_state(kRecvGpuWait)) {
        st.where = "gpu_wait";
        st.detail = fmt::format("{} seq {}: channel {} {} rank {} waits for its own GPU ({}) for {:.1f}s", op.func,
                                op.seq, w->channel, w->direction == "send" ? "send to" : "recv from", w->peer,
                                w->state, w->age_s);
      } else if (const FrWait* w = find_state(kRecvWait) ? find_state(kRecvWait) : find_state(kSendPeerWait)) {
        st.where = "waiting_on_peer";
        st.waits_on = w->peer;
        st.detail = fmt::format("{} seq {}: channel {} {} rank {} ({}) for {:.1f}s", op.func, op.seq, w->channel,
                                w->direction == "send" ? "send to" : "recv from", w->peer, w->state, w->age_s);
      } else {
        st.where = "in_progress";
        st.detail = fmt::format("in {} seq {} for {:.1f}s", op.func, op.seq, st.op_age_s);
      }
      a.ranks.push_back(std::move(st));
    }

    // Peers waited on that have no file still get a row (they are suspects).
    for (size_t i = 0, n0 = a.ranks.size(); i < n0; ++i) {
      auto w = a.ranks[i].waits_on;
      if (!w || *w < 0 || (a.nranks > 0 && *w >= a.nranks) || wanted.count(*w)) continue;
      wanted.insert(*w);
      FrRankState st;
      st.rank = *w;
      st.where = "no_file";
      st.detail = "no flight-recorder file for this rank (other host, plugin not loaded, or not collected)";
      a.ranks.push_back(std::move(st));
    }
    std::sort(a.ranks.begin(), a.ranks.end(), [](const FrRankState& x, const FrRankState& y) { return x.rank < y.rank; });
    auto state_of = [&a](int rank) -> const FrRankState* {
      for (const auto& r : a.ranks)
        if (r.rank == rank) return &r;
      return nullptr;
    };

    // Culprits: ranks whose own state is terminal. A receiver waiting on a
    // sender in SendWait is the same network pair: keep the sender.
    for (const auto& r : a.ranks)
      if (is_terminal(r.where)) a.culprits.push_back(r.rank);
    if (a.culprits.empty()) {
      // Follow waits: a peer with no file at all is the best we can name.
      for (const auto& r : a.ranks) {
        const FrRankState* peer = r.waits_on ? state_of(*r.waits_on) : nullptr;
        if (peer && peer->where == "no_file" &&
            std::find(a.culprits.begin(), a.culprits.end(), peer->rank) == a.culprits.end())
          a.culprits.push_back(peer->rank);
      }
    }
    // Precedence between terminal states of different ranks: the deepest
    // cause a peer's wait points at. Order: not_enqueued, proxy_stalled,
    // kernel_not_started, network_wait, flush_wait, gpu_wait: a send the NIC
    // never completed stalls its own GPU and, through the ring, other ranks'
    // GPUs (backpressure), so their GPU waits are consequences, not causes.
    static const std::vector<std::string> order = {"not_enqueued", "proxy_stalled", "kernel_not_started",
                                                   "network_wait", "flush_wait",    "gpu_wait"};
    std::string verdict;
    for (const auto& w : order) {
      for (int c : a.culprits)
        if (state_of(c)->where == w) {
          verdict = w;
          break;
        }
      if (!verdict.empty()) break;
    }
    if (verdict.empty() && !a.culprits.empty()) verdict = "peer_missing";
    if (!verdict.empty() && verdict != "peer_missing") {
      std::vector<int> keep;
      for (int c : a.culprits)
        if (state_of(c)->where == verdict) keep.push_back(c);
      a.culprits = keep;
    }
    bool any_waiting = std::any_of(a.ranks.begin(), a.ranks.end(), [](const FrRankState& r) {
      return r.where == "waiting_on_peer" || is_terminal(r.where);
    });
    if (common) a.in_flight = fmt::format("{} seq {}", common->func, common->seq);
    if (verdict.empty() || !any_waiting) {
      a.verdict = "healthy";
      a.culprits.clear();
      a.summary = common ? fmt::format("comm {}: {} in progress, nothing stuck", comm_hex(hash), a.in_flight)
                         : fmt::format("comm {}: nothing in flight", comm_hex(hash));
    } else {
      a.verdict = verdict;
      a.layer = verdict == "peer_missing" ? "framework" : layer_of(verdict);
      std::string who;
      for (size_t i = 0; i < a.culprits.size(); ++i) who += (i ? "," : "") + std::to_string(a.culprits[i]);
      const auto& first = *state_of(a.culprits.front());
      a.summary = fmt::format("comm {} stuck in {}: rank {} {}", comm_hex(hash),
                              a.in_flight.empty() ? "an op" : a.in_flight, who,
                              verdict == "peer_missing" ? "is waited on but has no flight recorder" : first.detail);
    }
    out.push_back(std::move(a));
  }
  return out;
}

nlohmann::json to_json(const FrCommAnalysis& a) {
  using nlohmann::json;
  json ranks = json::array();
  for (const auto& r : a.ranks) {
    json waits = json::array();
    for (const auto& w : r.waits)
      waits.push_back({{"channel", w.channel}, {"direction", w.direction}, {"peer", w.peer},
                       {"state", w.state}, {"step", w.step}, {"age_s", w.age_s}});
    json j{{"rank", r.rank}, {"has_file", r.has_file}, {"where", r.where}, {"detail", r.detail}, {"waits", waits}};
    if (r.has_file) {
      j["pid"] = r.pid;
      j["host"] = r.host;
      j["source"] = r.source;
      j["proxy_heartbeat_age_s"] = r.heartbeat_age_s;
    }
    if (r.op) {
      j["op"] = {{"kind", r.op->kind}, {"func", r.op->func}, {"seq", r.op->seq}, {"count", r.op->count},
                 {"dtype", r.op->dtype}, {"algo", r.op->algo}, {"proto", r.op->proto},
                 {"n_channels", r.op->n_channels}, {"state", r.op->state}, {"age_s", r.op_age_s}};
    }
    if (r.waits_on) j["waits_on"] = *r.waits_on;
    ranks.push_back(std::move(j));
  }
  return {{"comm", comm_hex(a.comm_hash)}, {"comm_name", a.comm_name}, {"nranks", a.nranks},
          {"in_flight", a.in_flight},     {"verdict", a.verdict},      {"layer", a.layer},
          {"culprits", a.culprits},       {"summary", a.summary},      {"ranks", ranks}};
}

std::vector<Finding> flight_findings(const std::vector<FrCommAnalysis>& analyses, const std::string& provenance) {
  std::vector<Finding> out;
  for (const auto& a : analyses) {
    if (a.verdict == "healthy") continue;
    for (const auto& r : a.ranks) {
      const bool culprit = std::find(a.culprits.begin(), a.culprits.end(), r.rank) != a.culprits.end();
      if (!culprit && r.where != "waiting_on_peer" && !is_terminal(r.where)) continue;
      Finding f;
      f.id = "nccl.fr." + (culprit && a.verdict == "peer_missing" ? std::string("peer_missing") : r.where);
      f.subject.rank = r.rank;
      f.subject.comm = comm_hex(a.comm_hash);
      if (r.has_file) {
        f.subject.pid = r.pid;
        f.subject.host = r.host;
      }
      if (r.op) f.subject.seq = static_cast<int64_t>(r.op->seq);
      f.summary = fmt::format("rank {}: {}", r.rank, r.detail);
      f.provenance.push_back(Provenance{r.source.empty() ? provenance : r.source, std::nullopt, r.detail});
      f.fields = {{"where", r.where}, {"in_flight", a.in_flight}};
      if (r.waits_on) f.fields["waits_on"] = *r.waits_on;
      if (!culprit) {
        f.role = FindingRole::symptom;
        f.layer = Layer::nccl;
        f.severity = Severity::warning;
        f.caused_by = a.culprits.empty() ? std::optional<std::string>() : fmt::format("rank {}", a.culprits.front());
        out.push_back(std::move(f));
        continue;
      }
      f.role = FindingRole::primary;
      f.severity = Severity::error;
      const std::string& w = (a.verdict == "peer_missing") ? a.verdict : r.where;
      f.layer = stuck_state_layer(w);
      f.supports = stuck_state_supports(w);
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace ccdiag::nccl
