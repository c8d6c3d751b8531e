#include "collectors/nccl/attach/attach_analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "collectors/nccl/stuck_state.hpp"

namespace ccdiag::nccl::attach {

namespace {

const char* kFuncs[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};

struct Seen {
  const ProcessAttach* proc;
  const CommState* comm;
};

bool stuck(const ProxySub& s) { return s.state != 'D' && s.state != 'I' && s.moving != true; }

bool terminal(const std::string& w) {
  return w == "init_hang" || w == "async_error" || w == "not_enqueued" || w == "gpu_wait" || w == "flush_wait" ||
         w == "network_wait";
}

std::string sub_text(const ProxyOp& o, const ProxySub& s) {
  return fmt::format("{} #{} channel {} {} rank {} step {}/{} ({}{})", o.p2p ? "p2p op" : "collective", o.index,
                     s.channel, s.direction == "send" ? "send to" : "recv from", s.peer,
                     s.direction == "send" ? s.done : s.received, s.nsteps, std::string(1, s.state),
                     s.moving ? (*s.moving ? ", moving" : ", not moving") : "");
}

AttachRankState rank_state(const Seen& s, const std::vector<uint64_t>& max_seq, uint64_t max_coll) {
  const CommState& c = *s.comm;
  AttachRankState st;
  st.rank = c.rank;
  st.seen = true;
  st.host = s.proc->host;
  st.source = s.proc->source;
  st.pid = s.proc->pid;
  if (c.init_state == 7) {
    st.where = "init_hang";
    st.detail = fmt::format("ncclCommInit has not completed (initState ncclInProgress, {} channel(s), proxy {})",
                            c.n_channels, c.proxy_present ? "started" : "not started");
    return st;
  }
  const bool async = c.async_result && *c.async_result != 0 && *c.async_result != 7 && *c.async_result != 6;
  if (async || (c.abort_flag && *c.abort_flag)) {
    st.where = "async_error";
    st.detail = async ? fmt::format("the comm holds an asynchronous error: {}", nccl_result_name(*c.async_result))
                      : "the comm's abort flag is raised";
    return st;
  }
  for (size_t f = 0; f < c.seq_numbers.size() && f < max_seq.size(); ++f) {
    if (c.seq_numbers[f] < max_seq[f]) {
      st.where = "not_enqueued";
      st.detail = fmt::format("issued {} {} op(s) where another rank issued {}: it never called {} #{}",
                              c.seq_numbers[f], f < 5 ? kFuncs[f] : "?", max_seq[f], f < 5 ? kFuncs[f] : "?",
                              c.seq_numbers[f] + 1);
      return st;
    }
  }
  if (c.seq_numbers.empty() && c.coll_op_count && *c.coll_op_count < max_coll) {
    st.where = "not_enqueued";
    st.detail = fmt::format("handed {} collectives to its proxy where another rank handed {}", *c.coll_op_count, max_coll);
    return st;
  }
  const ProxyOp* op_r = nullptr;
  const ProxySub *recv_net = nullptr, *recv_gpu = nullptr, *recv_flush = nullptr, *send_gpu = nullptr,
                 *send_net = nullptr;
  const ProxyOp *op_rg = nullptr, *op_rf = nullptr, *op_sg = nullptr, *op_sn = nullptr;
  bool any_active = false;
  for (const auto& o : c.proxy_ops) {
    for (const auto& sub : o.subs) {
      if (sub.state != 'D') any_active = true;
      if (!stuck(sub)) continue;
      if (sub.direction == "recv" && sub.state == 'R' && !recv_net) recv_net = &sub, op_r = &o;
      if (sub.direction == "recv" && sub.state == 'G' && !recv_gpu) recv_gpu = &sub, op_rg = &o;
      if (sub.direction == "recv" && sub.state == 'F' && !recv_flush) recv_flush = &sub, op_rf = &o;
      if (sub.direction == "send" && sub.state == 'G' && !send_gpu) send_gpu = &sub, op_sg = &o;
      if (sub.direction == "send" && sub.state == 'S' && !send_net) send_net = &sub, op_sn = &o;
    }
  }
  // A send the NIC never completed (S) is the strongest signal: its isend was
  // posted, so the receiver had a buffer ready. A recv whose data arrived but
  // is not consumed (recv G) points at this rank's GPU only when no send of
  // its own is stuck in the network (backpressure would explain it). A send
  // waiting for its GPU to produce (send G) is ambiguous: a hung kernel, or the
  // kernel waiting on an upstream NVLink/P2P peer that host memory cannot see.
  if (send_net) {
    st.where = "network_wait";
    st.waits_on = send_net->peer;
    st.detail = sub_text(*op_sn, *send_net) + ": posted to the network, never completed";
  } else if (recv_flush) {
    st.where = "flush_wait";
    st.detail = sub_text(*op_rf, *recv_flush) + ": stuck in the GPUDirect flush";
  } else if (recv_gpu) {
    st.where = "gpu_wait";
    st.detail = sub_text(*op_rg, *recv_gpu) + ": data arrived, its GPU does not consume it";
  } else if (recv_net) {
    st.where = "waiting_on_peer";
    st.waits_on = recv_net->peer;
    st.detail = sub_text(*op_r, *recv_net) + ": waiting for the peer's data";
  } else if (send_gpu) {
    st.where = "waiting_on_gpu";
    st.detail = sub_text(*op_sg, *send_gpu) +
                ": its GPU has not produced the data (a hung kernel, or the kernel waits on an NVLink/P2P peer)";
  } else if (any_active) {
    st.where = "in_progress";
    st.detail = fmt::format("{} proxy op(s) in flight, steps moving", c.proxy_ops.size());
  } else {
    st.where = "idle";
    st.detail = c.seq_numbers.empty()
                    ? "no proxy op in flight"
                    : fmt::format("no proxy op in flight; issued AllReduce {} AllGather {} (NVLink/P2P progress lives "
                                  "in GPU memory and is not visible)",
                                  c.seq_numbers.size() > 4 ? c.seq_numbers[4] : 0,
                                  c.seq_numbers.size() > 2 ? c.seq_numbers[2] : 0);
  }
  return st;
}

}  // namespace

std::vector<AttachCommAnalysis> analyze_attach(const std::vector<ProcessAttach>& procs) {
  std::map<uint64_t, std::vector<Seen>> by_comm;
  for (const auto& p : procs)
    for (const auto& c : p.comms) by_comm[c.comm_hash].push_back({&p, &c});
  std::vector<AttachCommAnalysis> out;
  for (auto& [hash, list] : by_comm) {
    AttachCommAnalysis a;
    a.comm_hash = hash;
    std::map<int, Seen> by_rank;  // one entry per rank: a rank seen twice (two samples, two bundles) keeps the first
    std::vector<uint64_t> max_seq;
    uint64_t max_coll = 0;
    for (const auto& s : list) {
      a.nranks = std::max(a.nranks, s.comm->nranks);
      by_rank.emplace(s.comm->rank, s);
      if (s.comm->init_state == 7) continue;  // counters of a comm still in init are all 0
      if (max_seq.size() < s.comm->seq_numbers.size()) max_seq.resize(s.comm->seq_numbers.size(), 0);
      for (size_t f = 0; f < s.comm->seq_numbers.size(); ++f) max_seq[f] = std::max(max_seq[f], s.comm->seq_numbers[f]);
      max_coll = std::max(max_coll, s.comm->coll_op_count.value_or(0));
    }
    for (auto& [r, s] : by_rank) a.ranks.push_back(rank_state(s, max_seq, max_coll));
    a.not_seen = std::max(0, a.nranks - static_cast<int>(by_rank.size()));
    std::set<int> listed;
    for (const auto& r : a.ranks) listed.insert(r.rank);
    auto add_unseen = [&](int r) {
      if (r < 0 || (a.nranks > 0 && r >= a.nranks) || !listed.insert(r).second) return;
      AttachRankState st;
      st.rank = r;
      st.where = "not_seen";
      st.detail = "no process of this comm's rank in the inputs (another host, not collected, or never started)";
      a.ranks.push_back(st);
    };
    if (a.nranks <= 256)
      for (int r = 0; r < a.nranks; ++r) add_unseen(r);
    for (size_t i = 0, n = a.ranks.size(); i < n; ++i)
      if (a.ranks[i].waits_on) add_unseen(*a.ranks[i].waits_on);
    std::sort(a.ranks.begin(), a.ranks.end(), [](const auto& x, const auto& y) { return x.rank < y.rank; });
    auto state_of = [&](int r) -> const AttachRankState* {
      for (const auto& s : a.ranks)
        if (s.rank == r) return &s;
      return nullptr;
    };

    // Deepest cause first; network before GPU: a stuck send (S) on one rank
    // explains unconsumed data (recv G) on others through backpressure.
    static const std::vector<std::string> order = {"init_hang",    "async_error", "not_enqueued",
                                                   "network_wait", "flush_wait",  "gpu_wait"};
    for (const auto& w : order) {
      for (const auto& r : a.ranks)
        if (r.where == w) a.culprits.push_back(r.rank);
      if (!a.culprits.empty()) {
        a.verdict = w;
        break;
      }
    }
    if (a.verdict == "init_hang" && a.not_seen > 0) {
      // Ranks in bootstrap wait for the ones that never joined: those are the culprits.
      a.verdict = "peer_missing";
      a.culprits.clear();
      for (const auto& r : a.ranks)
        if (r.where == "not_seen") a.culprits.push_back(r.rank);
      a.layer = "framework";
      std::string in_init;
      for (const auto& r : a.ranks)
        if (r.where == "init_hang") in_init += (in_init.empty() ? "" : ",") + std::to_string(r.rank);
      a.summary = fmt::format("comm 0x{:016x} ({} ranks) hangs in init: rank(s) {} wait in bootstrap for {} rank(s) "
                              "never seen{}",
                              hash, a.nranks, in_init, a.not_seen,
                              a.culprits.empty() ? "" : fmt::format(" (e.g. rank {})", a.culprits.front()));
    }
    if (a.verdict.empty()) {
      // Head of the wait chain: peers wait for this rank's data and its own
      // sends wait for its GPU, with nothing it waits on in sight -> its GPU.
      for (const auto& r : a.ranks) {
        const AttachRankState* peer = r.waits_on ? state_of(*r.waits_on) : nullptr;
        if (peer && peer->where == "waiting_on_gpu" &&
            std::find(a.culprits.begin(), a.culprits.end(), peer->rank) == a.culprits.end())
          a.culprits.push_back(peer->rank);
      }
      if (!a.culprits.empty()) a.verdict = "gpu_wait";
    }
    if (a.verdict.empty()) {
      for (const auto& r : a.ranks) {
        const AttachRankState* peer = r.waits_on ? state_of(*r.waits_on) : nullptr;
        if (peer && peer->where == "not_seen" &&
            std::find(a.culprits.begin(), a.culprits.end(), peer->rank) == a.culprits.end())
          a.culprits.push_back(peer->rank);
      }
      if (!a.culprits.empty()) a.verdict = "peer_missing";
    }
    const bool any_waiting = std::any_of(a.ranks.begin(), a.ranks.end(), [](const AttachRankState& r) {
      return r.where == "waiting_on_peer" || r.where == "waiting_on_gpu";
    });
    if (a.verdict.empty() && any_waiting) {
      // Stuck, but nothing in host memory says where: the kernels' NVLink/P2P
      // progress lives in GPU memory.
      a.verdict = "stuck";
      a.summary = fmt::format("comm 0x{:016x}: ranks wait on each other or on their GPUs, and host memory does not "
                              "show who is first (NVLink/P2P progress lives in GPU memory); compare stacks and the "
                              "kernel log (Xid) of every rank",
                              hash);
    } else if (a.verdict.empty()) {
      a.verdict = "healthy";
      a.summary = fmt::format("comm 0x{:016x}: {} rank(s) read, nothing stuck", hash, by_rank.size());
    } else if (a.summary.empty()) {
      a.layer = std::string(to_string(stuck_state_layer(a.verdict)));
      std::string who;
      for (size_t i = 0; i < a.culprits.size(); ++i) who += (i ? "," : "") + std::to_string(a.culprits[i]);
      const auto* first = state_of(a.culprits.front());
      a.summary = fmt::format("comm 0x{:016x}: rank {} {}", hash, who,
                              a.verdict == "peer_missing" ? "is waited on but was not found in the inputs"
                                                          : first->detail);
    }
    out.push_back(std::move(a));
  }
  return out;
}

nlohmann::json to_json(const AttachCommAnalysis& a) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : a.ranks) {
    nlohmann::json j{{"rank", r.rank}, {"seen", r.seen}, {"where", r.where}, {"detail", r.detail}};
    if (r.seen) {
      j["host"] = r.host;
      j["source"] = r.source;
      j["pid"] = r.pid;
    }
    if (r.waits_on) j["waits_on"] = *r.waits_on;
    ranks.push_back(std::move(j));
  }
  return {{"comm_hash", fmt::format("0x{:016x}", a.comm_hash)},
          {"nranks", a.nranks},
          {"not_seen", a.not_seen},
          {"verdict", a.verdict},
          {"layer", a.layer},
          {"culprits", a.culprits},
          {"summary", a.summary},
          {"ranks", ranks}};
}

std::vector<Finding> attach_findings(const std::vector<AttachCommAnalysis>& analyses) {
  std::vector<Finding> out;
  for (const auto& a : analyses) {
    if (a.verdict == "healthy") continue;
    const std::string hash = fmt::format("0x{:016x}", a.comm_hash);
    for (const auto& r : a.ranks) {
      const bool culprit = std::find(a.culprits.begin(), a.culprits.end(), r.rank) != a.culprits.end();
      const bool waiting = r.where == "waiting_on_peer" || r.where == "waiting_on_gpu" || terminal(r.where);
      if (!culprit && !waiting) continue;
      Finding f;
      f.subject.rank = r.rank;
      f.subject.comm = hash;
      if (r.seen) {
        f.subject.pid = r.pid;
        f.subject.host = r.host;
      }
      f.provenance.push_back(Provenance{r.seen ? r.source : "nccl attach", std::nullopt, r.detail});
      f.fields = {{"where", r.where}, {"verdict", a.verdict}, {"source", "nccl-attach"}};
      if (r.waits_on) f.fields["waits_on"] = *r.waits_on;
      if (culprit) {
        const std::string& w = a.verdict;
        f.id = "nccl.attach." + w;
        f.role = FindingRole::primary;
        f.severity = Severity::error;
        f.layer = stuck_state_layer(w);
        f.supports = stuck_state_supports(w);
        f.summary = w == "peer_missing"
                        ? fmt::format("rank {} of comm {}: waited on by its peers, no process found for it", r.rank, hash)
                        : fmt::format("rank {} of comm {}: {}", r.rank, hash, r.detail);
      } else {
        f.id = "nccl.attach." + r.where;
        f.role = FindingRole::symptom;
        f.severity = Severity::warning;
        f.layer = Layer::nccl;
        f.summary = fmt::format("rank {} of comm {}: {}", r.rank, hash, r.detail);
        if (!a.culprits.empty()) f.caused_by = fmt::format("rank {}", a.culprits.front());
      }
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace ccdiag::nccl::attach
