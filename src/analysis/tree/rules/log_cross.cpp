// Cross-finding rules over log facts (log_facts.hpp): conclusions no single
// line supports, drawn from what the logs show together and what they do not
// show (an error that is absent where it would have been printed).
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "analysis/tree/rules/rules.hpp"

namespace ccdiag::rules {

namespace {

bool any_causal(const EvidenceSet& set) {
  for (const auto& f : set.findings)
    if (is_causal_finding(f)) return true;
  return false;
}

// Hardware/transport evidence from bundles that shows a fault (an rdma port
// down, a QP in error, a degraded link) also counts as "an error elsewhere".
bool any_hardware_fault(const EvidenceSet& set) {
  for (const auto* e : set.of_kind("rdma.qp"))
    if (e->availability.is_ok() && str_field(e->data, "state").value_or("").find("ERR") != std::string::npos) return true;
  for (const auto* e : set.of_kind("rdma.port")) {
    if (!e->availability.is_ok()) continue;
    const auto st = str_field(e->data, "state").value_or("");
    if (!st.empty() && st.find("ACTIVE") == std::string::npos) return true;
  }
  return false;
}

std::string unit_of(const Subject& s) {
  return s.host.value_or("") + "/" + (s.pid ? std::to_string(*s.pid) : std::string());
}

// One observation of a rule that votes for several causes with one culprit:
// a hypothesis per cause under the rule's evidence key; the first carries the
// derived finding "tree.<key>", placed at the line `at` it rests on.
void push_votes(std::vector<Hypothesis>& out, const std::string& key, const Subject& culprit, const std::string& why,
                const Finding& at, std::initializer_list<std::pair<const char*, double>> votes) {
  const size_t first = out.size();
  for (const auto& [cause, weight] : votes) {
    Hypothesis h;
    h.cause = cause;
    h.culprit = culprit;
    h.weight = weight;
    h.evidence_key = key;
    h.finding_ids = {"tree." + key};
    h.why = why;
    h.order = at.order;
    out.push_back(std::move(h));
  }
  if (out.size() == first) return;
  out[first].derived = derived_finding("tree." + key, Layer::framework, Severity::error, why, culprit, {});
  out[first].derived->provenance = at.provenance;
}

}  // namespace

// A watchdog timeout with no error anywhere is the classic signature of a
// code-path divergence: a rank skipped the collective (a collective in a
// rank-0-only branch) or arrived too late. With an error elsewhere the timeout
// is only the symptom of that error and this rule stays silent.
void watchdog_without_error(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  const auto wd = set.findings_with("log.watchdog_timeout");
  if (wd.empty() || any_causal(set) || any_hardware_fault(set)) return;
  std::set<int> timed_out_ranks, seen_ranks;
  std::optional<int64_t> timeout_ms, seq;
  for (const auto* f : wd) {
    if (f->subject.rank) timed_out_ranks.insert(*f->subject.rank);
    if (auto t = int_field(f->fields, "timeout_ms")) timeout_ms = t;
    if (f->subject.seq) seq = f->subject.seq;
  }
  for (const auto& f : set.findings)
    if (f.subject.rank) seen_ranks.insert(*f.subject.rank);
  for (const auto& e : set.evidence)
    if (e.subject.rank) seen_ranks.insert(*e.subject.rank);
  Subject culprit;
  culprit.seq = seq;
  // Ranks that are in the logs but never timed out are the ones the others
  // waited for (they were not in the collective).
  std::vector<int> silent;
  for (int r : seen_ranks)
    if (!timed_out_ranks.count(r)) silent.push_back(r);
  if (!timed_out_ranks.empty() && silent.size() == 1) culprit.rank = silent.front();
  const std::string where = seq ? " at SeqNum " + std::to_string(*seq) : std::string();
  const std::vector<std::string> ids = {"log.watchdog_timeout"};
  auto add = [&](const char* cause, double w, std::string why) {
    Hypothesis h;
    h.cause = cause;
    h.culprit = culprit;
    h.weight = w;
    h.evidence_key = "watchdog_without_error";
    h.finding_ids = ids;
    h.why = std::move(why);
    h.order = wd.front()->order;
    out.push_back(std::move(h));
  };
  // A short timeout (< 2 min) is more likely too short for a legitimate
  // step than a rank that never arrives.
  if (timeout_ms && *timeout_ms < 120000) {
    add("straggler_or_timeout_too_short", 30,
        "watchdog timeout after only " + std::to_string(*timeout_ms / 1000) + " s with no error on any rank");
    add("rank_skips_collective", 4, "watchdog timeout with no error on any rank" + where);
    return;
  }
  add("rank_skips_collective", 20,
      "watchdog timeout" + where + " with no error, exception or hardware fault on any rank: ranks disagree on "
      "which collectives to run (a collective skipped by some ranks)");
  add("straggler_or_timeout_too_short", 6, "watchdog timeout with no error: a rank may arrive late");
  add("rank_stuck_in_host_code", 3, "watchdog timeout with no error: a rank may be stuck in its own code");
}

// Each rank's watchdog line says which collective it timed out in:
// WorkNCCL(SeqNum=S, OpType=O, NumelIn=N, ...). Sequence numbers count the
// collectives of one process group, so two ranks stuck at the same S of the
// same group are in the same call of the program, and it must be the same op
// with the same element count on both: anything else is ranks that issued
// different collectives (a data-dependent shape, a branch). The group is
// often printed on the rank's other watchdog lines only ("[PG ID 0 ...]
// failure detected by watchdog at work sequence id: S"); without any group,
// a small S could be two groups' coincident counters, so it weighs less.
void watchdog_disagreement(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  // The signature scanner's finding of a line (pytorch.watchdog.timeout)
  // and the tree's own log fact (log.watchdog_timeout) carry the same fields;
  // which of the two a set holds depends on the path the logs took.
  auto wd = set.findings_with("pytorch.watchdog.timeout");
  for (const auto* f : set.findings_with("log.watchdog_timeout")) wd.push_back(f);
  if (wd.size() < 2) return;
  // Process group of (rank, seq) from any finding that names both.
  std::map<std::pair<int, int64_t>, std::string> pg_of;
  for (const auto& f : set.findings) {
    if (!f.subject.rank || !f.subject.seq) continue;
    std::string pg = f.subject.process_group.value_or("");
    for (const auto& p : f.provenance) {
      if (!pg.empty()) break;
      // "[PG ID 0 PG GUID 0(default_pg) Rank 3]" / "[PG 0 (default_pg) Rank 3]"
      const size_t at = p.excerpt.find("[PG ");
      if (at == std::string::npos) continue;
      size_t i = at + 4;
      if (p.excerpt.compare(i, 3, "ID ") == 0) i += 3;
      while (i < p.excerpt.size() && std::isdigit(static_cast<unsigned char>(p.excerpt[i]))) pg += p.excerpt[i++];
    }
    if (!pg.empty()) pg_of[{*f.subject.rank, *f.subject.seq}] = pg;
  }
  struct Call {
    int rank;
    std::string op;
    int64_t numel;
    const Finding* f;
  };
  std::map<std::pair<std::string, int64_t>, std::vector<Call>> by_call;
  std::set<std::pair<int, int64_t>> seen;
  for (const auto* f : wd) {
    if (!f->subject.rank || !f->subject.seq) continue;
    if (!seen.insert({*f->subject.rank, *f->subject.seq}).second) continue;
    std::string pg = f->subject.process_group.value_or("");
    if (pg.empty())
      if (auto it = pg_of.find({*f->subject.rank, *f->subject.seq}); it != pg_of.end()) pg = it->second;
    by_call[{pg, *f->subject.seq}].push_back(
        {*f->subject.rank, str_field(f->fields, "op").value_or(""), int_field(f->fields, "numel_in").value_or(-1), f});
  }
  // Ops whose element count is the same on every rank by definition (the
  // all-to-all, gather/scatter and point-to-point families may differ).
  static const std::set<std::string> same_size = {"ALLREDUCE", "BROADCAST", "REDUCE", "ALLGATHER",
                                                  "_ALLGATHER_BASE", "REDUCE_SCATTER", "_REDUCE_SCATTER_BASE"};
  for (const auto& [key, calls] : by_call) {
    if (calls.size() < 2) continue;
    const auto& [pg, seq] = key;
    std::map<std::string, std::vector<int>> variants;  // "BROADCAST numel 64" -> ranks
    bool op_differs = false, size_differs = false;
    for (const auto& c : calls) {
      op_differs |= c.op != calls.front().op;
      size_differs |= c.numel >= 0 && calls.front().numel >= 0 && c.numel != calls.front().numel;
      variants[c.op + (c.numel >= 0 ? " of " + std::to_string(c.numel) + " elements" : std::string())].push_back(c.rank);
    }
    if (!op_differs && !(size_differs && same_size.count(calls.front().op))) continue;
    std::string what;
    for (const auto& [v, ranks] : variants) {
      std::string rs;
      for (int r : ranks) rs += (rs.empty() ? "" : ",") + std::to_string(r);
      what += (what.empty() ? "" : "; ") + std::string(ranks.size() == 1 ? "rank " : "ranks ") + rs + " in " + v;
    }
    Hypothesis h;
    h.cause = "mismatched_collectives";
    h.culprit.seq = seq;
    if (!pg.empty()) h.culprit.process_group = pg;
    // The odd one out, when one variant has a single rank and another several.
    if (variants.size() == 2) {
      const auto& a = variants.begin()->second;
      const auto& b = std::next(variants.begin())->second;
      if (a.size() == 1 && b.size() >= 2) h.culprit.rank = a.front();
      if (b.size() == 1 && a.size() >= 2) h.culprit.rank = b.front();
    }
    h.weight = !pg.empty() ? 40 : seq >= 100 ? 25 : 6;
    h.evidence_key = "watchdog_disagreement";
    h.finding_ids = {"tree.watchdog_disagreement"};
    h.why = "the watchdog timed out different collectives at SeqNum " + std::to_string(seq) +
            (pg.empty() ? std::string() : " of process group " + pg) + ": " + what;
    std::vector<const Evidence*> none;
    h.derived = derived_finding("tree.watchdog_disagreement", Layer::framework, Severity::critical, h.why,
                                h.culprit, none);
    h.derived->provenance = calls.front().f->provenance;
    h.order = calls.front().f->order;
    out.push_back(std::move(h));
    return;  // the first disagreement is the one that matters
  }
}

// NCCL_DEBUG_SUBSYS=COLL prints every call a rank makes with its opCount (the
// communicator's launch counter, the same on every rank for the same call:
// the n-th op of opCount k on one rank meets the n-th of k on the others).
// Where ranks of one communicator logged different functions, or different
// counts, datatypes or roots for a function whose arguments every rank passes
// alike, the calls do not match: the job deadlocks or corrupts there.
void coll_disagreement(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  const auto calls = set.of_kind("log.coll_calls");
  if (calls.size() < 2) return;
  struct Op {
    std::string func;
    int64_t count, datatype, redop, root;
  };
  struct Proc {
    const Evidence* e;
    std::string who;
    std::map<int64_t, std::vector<Op>> ops;  // opCount -> ops in order
  };
  std::map<std::string, std::vector<Proc>> by_comm;
  for (const auto* e : calls) {
    Proc p{e, {}, {}};
    if (auto r = int_field(e->data, "rank")) p.who = "rank " + std::to_string(*r);
    else if (auto d = str_field(e->data, "dev")) p.who = "GPU " + *d;
    if (e->subject.host) p.who += (p.who.empty() ? "" : " on ") + *e->subject.host;
    if (e->subject.pid) p.who += " (pid " + std::to_string(*e->subject.pid) + ")";
    for (const auto& o : e->data.value("ops", nlohmann::json::array())) {
      if (!o.is_array() || o.size() != 6 || !o[0].is_number_integer() || !o[1].is_string()) continue;
      p.ops[o[0].get<int64_t>()].push_back(
          Op{o[1].get<std::string>(), o[2].get<int64_t>(), o[3].get<int64_t>(), o[4].get<int64_t>(), o[5].get<int64_t>()});
    }
    by_comm[str_field(e->data, "comm").value_or("") + "/" + std::to_string(int_field(e->data, "nranks").value_or(0))]
        .push_back(std::move(p));
  }
  // Functions whose count, datatype (and root) every rank passes alike.
  static const std::set<std::string> same_args = {"AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter"};
  auto describe = [](const Op& o) {
    return o.func + " count " + std::to_string(o.count) + " datatype " + std::to_string(o.datatype) +
           (o.func == "Broadcast" || o.func == "Reduce" ? " root " + std::to_string(o.root) : std::string());
  };
  for (const auto& [comm, procs] : by_comm) {
    if (procs.size() < 2) continue;
    std::set<int64_t> op_counts;
    for (const auto& p : procs)
      for (const auto& [k, v] : p.ops) op_counts.insert(k);
    for (int64_t k : op_counts) {
      // The ranks that logged this opCount, op by op.
      for (size_t n = 0;; ++n) {
        std::map<std::string, std::vector<const Proc*>> variants;
        bool any = false, p2p = false;
        for (const auto& p : procs) {
          auto it = p.ops.find(k);
          if (it == p.ops.end() || n >= it->second.size()) continue;
          any = true;
          const Op& o = it->second[n];
          if (!same_args.count(o.func)) p2p = true;  // Send/Recv and all-to-all differ by design
          variants[describe(o)].push_back(&p);
        }
        if (!any) break;
        if (p2p || variants.size() < 2) continue;
        std::string what;
        for (const auto& [v, ps] : variants) {
          std::string who;
          for (const auto* p : ps) who += (who.empty() ? "" : ", ") + (p->who.empty() ? std::string("?") : p->who);
          what += (what.empty() ? "" : "; ") + who + ": " + v;
        }
        Hypothesis h;
        h.cause = "mismatched_collectives";
        // The odd one out, when one process stands against two or more.
        if (variants.size() == 2) {
          const auto& a = variants.begin()->second;
          const auto& b = std::next(variants.begin())->second;
          const Proc* odd = a.size() == 1 && b.size() >= 2 ? a.front() : b.size() == 1 && a.size() >= 2 ? b.front() : nullptr;
          if (odd) {
            h.culprit.host = odd->e->subject.host;
            h.culprit.pid = odd->e->subject.pid;
            if (auto r = int_field(odd->e->data, "rank")) h.culprit.rank = static_cast<int>(*r);
          }
        }
        h.weight = 40;
        h.evidence_key = "coll_disagreement";
        h.finding_ids = {"tree.coll_disagreement"};
        h.why = "ranks of one communicator logged different calls at opCount " + std::to_string(k) + ": " + what;
        std::vector<const Evidence*> from;
        for (const auto& [v, ps] : variants) from.push_back(ps.front()->e);
        h.derived = derived_finding("tree.coll_disagreement", Layer::framework, Severity::critical, h.why, h.culprit,
                                    from);
        h.order = procs.front().e->provenance.line;
        out.push_back(std::move(h));
        return;  // the first disagreement is the one that matters
      }
    }
  }
}

// TORCH_DISTRIBUTED_DEBUG=DETAIL checks every collective's fingerprint before
// running it; on a mismatch each rank raises "Rank R is running collective:
// <its own>, but Rank S is running collective: <the first that differs>". When
// one rank issued the odd call, every rank's pair names it (the others name it
// as S, it names whichever rank it compared with as S): the one rank in every
// pair, from three or more reporters, is the one that diverged. With two
// ranks, or two camps, each side is odd to the other and nobody is named.
void fingerprint_odd_rank(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  auto fs = set.findings_with("pytorch.collective_mismatch");
  for (const auto* f : set.findings_with("log.collective_mismatch")) fs.push_back(f);
  std::set<std::pair<int, int>> pairs;
  const Finding* first = nullptr;
  for (const auto* f : fs) {
    const auto r = int_field(f->fields, "rank");
    const auto o = int_field(f->fields, "other_rank");
    if (!r || !o || *r == *o) continue;
    if (pairs.insert({static_cast<int>(*r), static_cast<int>(*o)}).second && (!first || f->order < first->order))
      first = f;
  }
  std::set<int> reporters;
  for (const auto& [r, o] : pairs) reporters.insert(r);
  if (reporters.size() < 3) return;
  std::optional<int> odd;
  for (int cand : reporters) {
    const bool in_every = std::all_of(pairs.begin(), pairs.end(),
                                      [cand](const std::pair<int, int>& p) { return p.first == cand || p.second == cand; });
    if (!in_every) continue;
    if (odd) return;  // two candidates: no single rank diverged
    odd = cand;
  }
  if (!odd) return;
  Hypothesis h;
  h.cause = "mismatched_collectives";
  h.culprit.rank = *odd;
  h.weight = 4;  // the mismatch itself is voted by each line; this names who
  h.evidence_key = "fingerprint_odd_rank";
  h.finding_ids = {"tree.fingerprint_odd_rank"};
  h.why = "the collective fingerprint check of " + std::to_string(reporters.size()) +
          " ranks names rank " + std::to_string(*odd) + " in every mismatch: it issued the odd call";
  std::vector<const Evidence*> none;
  h.derived = derived_finding("tree.fingerprint_odd_rank", Layer::framework, Severity::error, h.why, h.culprit, none);
  h.derived->provenance = first->provenance;
  h.order = first->order;
  out.push_back(std::move(h));
}

// Gloo builds its full mesh in init_process_group through the store: each
// rank publishes its address under a key that ends in its rank
// ("/default_pg/0//cpu//0/2") and waits for every other rank's. "wait timeout
// after N ms, keys: .../2" on the other ranks means rank 2 never got to
// init_process_group within the timeout: it was still preparing (a model or
// dataset loaded before init), stuck before it, or dead. In the default group
// the key's rank is the global rank; in another group it is the group rank.
void store_key_never_set(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  // The rank that hosts the TCPStore (MASTER_ADDR's, rank 0 by default) waits
  // in init_process_group for every client before it publishes anything: when
  // it reports "Timed out after N seconds waiting for clients. J/E clients
  // joined", its key was never set because a client never came, not because
  // it was late. store_clients_missing names the absent rank instead.
  const auto store_waits = set.findings_with("pytorch.store.clients_timeout");
  std::map<int, std::set<int>> waiters;  // awaited rank -> ranks that waited for it
  std::map<int, const Finding*> first;
  for (const auto* f : set.findings_with("pytorch.store.wait_timeout")) {
    const std::string keys = str_field(f->fields, "keys").value_or("");
    if (keys.find("/default_pg/") == std::string::npos || keys.find("//cpu//") == std::string::npos) continue;
    const size_t slash = keys.find_last_of('/');
    if (slash == std::string::npos || slash + 1 >= keys.size()) continue;
    const std::string tail = keys.substr(slash + 1);
    if (tail.size() > 6 || !std::all_of(tail.begin(), tail.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      continue;
    const int awaited = std::stoi(tail);
    if (f->subject.rank && *f->subject.rank == awaited) continue;
    waiters[awaited].insert(f->subject.rank.value_or(-1));
    if (!first.count(awaited)) first[awaited] = f;
  }
  if (waiters.size() != 1) return;  // several absent ranks: a node that never started, not one rank
  // Plain copies, not a structured binding: clang 14 (the fuzz build) rejects
  // lambdas that capture one.
  const int rank = waiters.begin()->first;
  for (const auto* w : store_waits)
    if (!w->subject.rank || *w->subject.rank == rank) return;  // the awaited rank was the store host, waiting
  const std::set<int> who = waiters.begin()->second;
  Subject culprit;
  culprit.rank = rank;
  culprit.host = first[rank]->subject.host;
  std::string ws;
  for (int r : who)
    if (r >= 0) ws += (ws.empty() ? "" : ",") + std::to_string(r);
  const std::string why = (ws.empty() ? std::string("the other ranks") : "rank(s) " + ws) +
                          " gave up in init_process_group waiting for rank " + std::to_string(rank) +
                          "'s gloo address (store key " + str_field(first[rank]->fields, "keys").value_or("") +
                          "): rank " + std::to_string(rank) + " had not reached init_process_group";
  // Late more often than stuck or dead: a dead worker is reported by the
  // agent before the others' store timeout, with its own exit.
  push_votes(out, "store_key_never_set", culprit, why, *first[rank],
             {{"straggler_or_timeout_too_short", 8}, {"rank_stuck_in_host_code", 3}, {"rank_process_died", 1.5}});
}

// The store host's "Timed out after N seconds waiting for clients. J/E
// clients joined": E - J processes never connected to MASTER_ADDR:MASTER_PORT
// (never started, died before the rendezvous, or could not reach it). When the
// store counts ranks (init_process_group's env:// store: E is the world size)
// and the logs name every rank below E but one, that one is the absent rank.
// torchrun's agent store counts nodes instead; its logs name local workers,
// not E - 1 ranks below E, and no rank is named then.
void store_clients_missing(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  const auto waits = set.findings_with("pytorch.store.clients_timeout");
  if (waits.empty()) return;
  const Finding* w = waits.front();
  const auto expected = int_field(w->fields, "expected");
  const auto joined = int_field(w->fields, "joined");
  if (!expected || !joined || *expected - *joined != 1 || *expected > 4096) return;
  std::set<int> seen;
  for (const auto& f : set.findings)
    if (f.subject.rank) seen.insert(*f.subject.rank);
  for (const auto& e : set.evidence)
    if (e.subject.rank) seen.insert(*e.subject.rank);
  if (seen.size() != static_cast<size_t>(*expected - 1) || *seen.rbegin() >= *expected || *seen.begin() < 0) return;
  int missing = 0;
  while (seen.count(missing)) ++missing;
  Subject culprit;
  culprit.rank = missing;
  const std::string why = "the store host waited for " + std::to_string(*expected) + " processes and " +
                          std::to_string(*joined) + " joined; every rank below " + std::to_string(*expected) +
                          " but rank " + std::to_string(missing) +
                          " is in the logs: rank " + std::to_string(missing) +
                          " never reached the rendezvous (not started, dead before it, unable to reach "
                          "MASTER_ADDR:MASTER_PORT, or still busy before init_process_group)";
  // The signature already votes for these causes; this rule adds who, and
  // only a little weight: from the logs of the ranks that came, a rank that
  // was never launched, one that could not connect and one still loading
  // before init_process_group read the same.
  push_votes(out, "store_clients_missing", culprit, why, *w,
             {{"rank_process_died", 1.5}, {"bootstrap_unreachable", 1.5}, {"straggler_or_timeout_too_short", 1}});
}

// NCCL_SOCKET_IFNAME set, but no "Bootstrap : Using <if>:<ip>" line from that
// process: the filter matched no interface. And a bootstrap on a container
// bridge while other hosts use a routable interface.
void socket_ifname(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  std::set<std::string> with_bootstrap;
  std::map<std::string, std::string> bootstrap_if;  // unit -> ifname
  for (const auto* e : set.of_kind("log.bootstrap")) {
    with_bootstrap.insert(unit_of(e->subject));
    bootstrap_if[e->subject.host.value_or("")] = str_field(e->data, "ifname").value_or("");
  }
  for (const auto* e : set.of_kind("log.nccl_env")) {
    if (str_field(e->data, "name") != "NCCL_SOCKET_IFNAME") continue;
    if (with_bootstrap.count(unit_of(e->subject))) continue;
    Hypothesis h;
    h.cause = "wrong_network_interface";
    h.culprit.host = e->subject.host;
    if (e->subject.rank) h.culprit.rank = e->subject.rank;
    h.culprit.nic = str_field(e->data, "value");
    h.weight = 8;
    h.evidence_key = "ifname_without_bootstrap";
    h.finding_ids = {"tree.ifname_without_bootstrap"};
    h.why = "NCCL_SOCKET_IFNAME=" + str_field(e->data, "value").value_or("") + " on " + host_name(e->subject) +
            " but NCCL never logged a bootstrap interface: no interface matches";
    h.derived = derived_finding("tree.ifname_without_bootstrap", Layer::system_config, Severity::error, h.why,
                                h.culprit, {e});
    h.order = e->provenance.line;
    out.push_back(std::move(h));
    break;  // one piece of evidence, however many ranks print it
  }
  // NCCL bootstrapping on loopback while the job spans hosts: the peers can
  // never meet. NCCL takes lo only when told to (NCCL_SOCKET_IFNAME=lo) or
  // when no other interface is up; torch's store takes the host name's
  // address, which Debian's /etc/hosts maps to 127.0.1.1.
  {
    std::set<std::string> hosts;
    const Evidence* on_lo = nullptr;
    for (const auto* e : set.of_kind("log.bootstrap")) {
      if (e->subject.host) hosts.insert(*e->subject.host);
      const auto ifname = str_field(e->data, "ifname").value_or("");
      if (!on_lo && (ifname == "lo" || str_field(e->data, "addr").value_or("").rfind("127.", 0) == 0)) on_lo = e;
    }
    for (const auto& h : set.hosts) hosts.insert(h);
    if (on_lo && hosts.size() >= 2) {
      Hypothesis h;
      h.cause = "hostname_resolves_to_loopback";
      h.culprit.host = on_lo->subject.host;
      h.weight = 30;
      h.evidence_key = "bootstrap_on_loopback_across_hosts";
      h.finding_ids = {"tree.bootstrap_on_loopback"};
      h.why = host_name(on_lo->subject) + " bootstraps on loopback (" + str_field(on_lo->data, "addr").value_or("") +
              ") in a job across " + std::to_string(hosts.size()) + " hosts";
      h.derived = derived_finding("tree.bootstrap_on_loopback", Layer::system_config, Severity::error, h.why, h.culprit,
                                  {on_lo});
      out.push_back(h);
      h.cause = "wrong_network_interface";
      h.weight = 10;
      h.derived.reset();
      out.push_back(std::move(h));
    }
  }
  // Container bridges and libvirt networks are not routable between hosts.
  if (bootstrap_if.size() >= 2) {
    for (const auto* e : set.of_kind("log.bootstrap")) {
      const auto ifname = str_field(e->data, "ifname").value_or("");
      const auto addr = str_field(e->data, "addr").value_or("");
      const bool bridge = ifname.rfind("docker", 0) == 0 || ifname.rfind("virbr", 0) == 0 ||
                          ifname.rfind("cni", 0) == 0 || ifname.rfind("br-", 0) == 0 || addr.rfind("172.17.", 0) == 0;
      if (!bridge) continue;
      Hypothesis h;
      h.cause = "wrong_network_interface";
      h.culprit.host = e->subject.host;
      h.culprit.nic = ifname;
      h.weight = 60;
      h.evidence_key = "bootstrap_on_bridge";
      h.finding_ids = {"tree.bootstrap_on_bridge"};
      h.why = host_name(e->subject) + " bootstraps on " + ifname + " (" + addr +
              "), a host-local bridge other hosts cannot reach";
      h.derived = derived_finding("tree.bootstrap_on_bridge", Layer::system_config, Severity::error, h.why, h.culprit, {e});
      out.push_back(std::move(h));
      break;
    }
  }
  // The socket transport striped over many interfaces ("via NET/Socket/5"):
  // with NCCL_SOCKET_IFNAME unset NCCL takes every interface that is up except
  // lo and docker*, so container bridges (br-*, cni*, virbr*), veths and
  // link-local addresses join the real NIC. A server has one or two NICs for
  // this; three or more socket devices is that list, and connections made over
  // the host-local ones never reach the peer. Weak by itself (a VM may have
  // several real NICs): it names the first thing to check when the job failed.
  bool ifname_set = false;
  for (const auto* e : set.of_kind("log.nccl_env"))
    if (str_field(e->data, "name") == "NCCL_SOCKET_IFNAME") ifname_set = true;
  if (ifname_set) return;
  std::map<std::string, std::set<int>> socket_devs;  // process -> socket device indices
  std::map<std::string, const Evidence*> first_edge;
  for (const auto* e : set.of_kind("log.channel_edge")) {
    const auto t = str_field(e->data, "transport").value_or("");
    if (t.rfind("NET/Socket/", 0) != 0) continue;
    const std::string idx = t.substr(11, t.find('/', 11) - 11);
    if (idx.empty() || idx.size() > 2 || idx.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string unit = unit_of(e->subject);
    socket_devs[unit].insert(std::stoi(idx));
    first_edge.emplace(unit, e);
  }
  for (const auto& [unit, devs] : socket_devs) {
    if (devs.size() < 3) continue;
    const Evidence* e = first_edge[unit];
    Hypothesis h;
    h.cause = "wrong_network_interface";
    h.culprit.host = e->subject.host;
    if (e->subject.rank) h.culprit.rank = e->subject.rank;
    h.weight = 5;
    h.evidence_key = "socket_transport_striped";
    h.finding_ids = {"tree.socket_transport_striped"};
    h.why = "NCCL's socket transport on " + host_name(e->subject) + " spreads channels over " +
            std::to_string(devs.size()) +
            " interfaces with NCCL_SOCKET_IFNAME unset: container bridges, veths or link-local addresses are "
            "likely among them";
    h.derived = derived_finding("tree.socket_transport_striped", Layer::system_config, Severity::warning, h.why,
                                h.culprit, {e});
    h.order = e->provenance.line;
    out.push_back(std::move(h));
    break;  // one process names it; the others read the same list
  }
}

// NCCL appends "/GDRDMA" to a network channel's transport when the NIC reads
// and writes GPU memory directly ("via NET/IB/3/GDRDMA"). A job whose network
// channels all lack it stages every inter-node byte through host memory: on
// an RDMA fabric the usual reason is that GPUDirect RDMA is not available on
// the host (nvidia-peermem not loaded, no DMA-BUF), less often that NCCL
// judged the GPU-NIC path too far (topology) or was told not to
// (NCCL_NET_GDR_LEVEL). Socket networks never use GDR and are not counted.
void net_without_gdr(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  for (const auto* e : set.of_kind("log.nccl_env"))
    if (str_field(e->data, "name") == "NCCL_NET_GDR_LEVEL" || str_field(e->data, "name") == "NCCL_NET_GDR_READ")
      return;  // set on purpose: the operator chose where GDR applies
  // Network channels by the host that logged them (a "[receive]" line shows
  // the receiver's side), with and without GPUDirect RDMA.
  struct HostNet {
    size_t gdr = 0, plain = 0;
    const Evidence* first_plain = nullptr;
  };
  std::map<std::string, HostNet> by_host;
  for (const auto* e : set.of_kind("log.channel_edge")) {
    const auto t = str_field(e->data, "transport").value_or("");
    if (t.rfind("NET/", 0) != 0 || t.rfind("NET/Socket", 0) == 0) continue;
    auto& h = by_host[e->subject.host.value_or("")];
    // One fact per edge; "channels" counts the lines (channels) that showed it.
    const auto lines = static_cast<size_t>(std::max<int64_t>(1, int_field(e->data, "channels").value_or(1)));
    if (t.find("GDRDMA") != std::string::npos) {
      h.gdr += lines;
    } else {
      h.plain += lines;
      if (!h.first_plain) h.first_plain = e;
    }
  }
  size_t hosts_with_gdr = 0;
  for (const auto& [host, h] : by_host) hosts_with_gdr += h.gdr > 0;
  for (const auto& [host, h] : by_host) {
    if (h.gdr > 0 || h.plain < 2) continue;
    // Other hosts of the same job, same NCCL and settings, do use GDR: what
    // differs is this host (its peer-memory module or DMA-BUF support).
    const bool odd_one_out = hosts_with_gdr > 0 && !host.empty();
    const Evidence* first = h.first_plain;
    for (const auto& [cause, w] : std::vector<std::pair<const char*, double>>{
             {"gpudirect_rdma_module_missing", odd_one_out ? 20.0 : 6.0}, {"pcie_topology_misdetected", 1.5}}) {
      Hypothesis hy;
      hy.cause = cause;
      hy.culprit.host = first->subject.host;
      hy.weight = w;
      hy.evidence_key = "net_without_gdr";
      hy.finding_ids = {"tree.net_without_gdr"};
      hy.why = std::to_string(h.plain) + " network channel(s) without /GDRDMA (e.g. via " +
               str_field(first->data, "transport").value_or("") + ")" +
               (odd_one_out ? " on " + host + " while " + std::to_string(hosts_with_gdr) +
                                  " other host(s) of the job use GPUDirect RDMA"
                            : std::string()) +
               ": NCCL stages inter-node traffic through host memory, GPUDirect RDMA is not in use";
      hy.derived = derived_finding("tree.net_without_gdr", Layer::system_config, Severity::warning, hy.why,
                                   hy.culprit, {first});
      hy.order = first->provenance.line;
      out.push_back(std::move(hy));
    }
    return;  // one host named; the others read the same
  }
  // GPUDirect RDMA seen working (a network channel "/GDRDMA", NCCL's "GDR 1" or
  // "GPU Direct RDMA Enabled") and no host without it: the peer-memory module
  // and DMA-BUF path are there, whatever else failed to register.
  const Evidence* gdr = nullptr;
  for (const auto* e : set.of_kind("log.gdr_in_use")) {
    gdr = e;
    break;
  }
  if (!gdr && hosts_with_gdr == 0) return;
  Hypothesis hy;
  hy.cause = "gpudirect_rdma_module_missing";
  hy.weight = 0.25;
  hy.evidence_key = "gdr_in_use";
  hy.why = "GPUDirect RDMA is in use" + (gdr ? " (" + gdr->provenance.excerpt.substr(0, 120) + ")" : std::string()) +
           ": the peer-memory path works";
  hy.order = gdr ? gdr->provenance.line : std::nullopt;
  out.push_back(std::move(hy));
}

// P2P/IPC or SHM is only possible inside one host. An intra-node edge between
// ranks on different hosts means NCCL believed they share a host: a host
// identity collision (hostnames with the same short prefix, cloned boot_id)
// or a topology misdetection.
namespace {

// One channel line, from the rank that logged it (`local`, on the line's host)
// to its peer. A "[receive]" line names the peer first ("15[7] -> 16[0]
// [receive]" is logged by rank 16).
struct ChannelEdge {
  int local = 0, local_dev = 0, peer = 0, peer_dev = 0;
  std::string transport;
  const Evidence* e = nullptr;
};

bool cross_host_p2p_in(const std::vector<ChannelEdge>& edges, std::vector<Hypothesis>& out) {
  std::map<int, std::set<int>> devs_of_rank;
  std::map<int, std::string> host_of_rank;
  std::set<int> all_devs;
  for (const auto& c : edges) {
    devs_of_rank[c.local].insert(c.local_dev);
    all_devs.insert(c.local_dev);
    if (c.e->subject.host) host_of_rank[c.local] = *c.e->subject.host;
    // The peer of a network edge (NET/IB, NET/Socket, a plugin) is on another
    // node: its device ordinal says nothing about this host's GPUs.
    if (c.transport.rfind("NET", 0) == 0 || c.transport.rfind("COLLNET", 0) == 0) continue;
    devs_of_rank[c.peer].insert(c.peer_dev);
    all_devs.insert(c.peer_dev);
  }
  std::map<int, std::set<int>> ranks_of_dev;
  for (const auto& [r, ds] : devs_of_rank)
    for (int d : ds) ranks_of_dev[d].insert(r);
  // Ranks that log edges are local to the host that logged them; a peer that
  // never logs there and shares a device ordinal with a local rank is remote.
  std::map<std::string, std::set<int>> local_ranks;
  std::map<int, std::set<std::string>> peer_hosts;  // hosts whose intra-node edges name the rank as peer
  for (const auto& c : edges) {
    local_ranks[c.e->subject.host.value_or("")].insert(c.local);
    if (c.transport.rfind("NET", 0) != 0 && c.transport.rfind("COLLNET", 0) != 0)
      peer_hosts[c.peer].insert(c.e->subject.host.value_or(""));
  }
  auto remote_peer = [&](const ChannelEdge& c) {
    const auto& local = local_ranks[c.e->subject.host.value_or("")];
    if (local.count(c.peer)) return false;
    for (int r : ranks_of_dev[c.peer_dev])
      if (r != c.peer && local.count(r)) return true;
    return false;
  };
  // Edges to a remote-looking peer first, then the rest, each once.
  std::vector<const ChannelEdge*> ordered;
  for (const auto& c : edges)
    if (remote_peer(c)) ordered.push_back(&c);
  for (const auto& c : edges)
    if (!remote_peer(c)) ordered.push_back(&c);
  for (const auto* c : ordered) {
    const std::string& transport = c->transport;
    if (transport.rfind("P2P", 0) != 0 && transport.rfind("SHM", 0) != 0) continue;
    const int fr = c->local, tr = c->peer, td = c->peer_dev;
    const Evidence* e = c->e;
    bool proven = host_of_rank.count(fr) && host_of_rank.count(tr) && host_of_rank[fr] != host_of_rank[tr];
    // Processes that see several GPUs (distinct device ordinals) and two ranks
    // on the same ordinal: those two ranks cannot be on one host.
    // A rank that logged its own lines from another host is no witness: it
    // shares the ordinal on its own machine.
    // A rank that never logged is placed by the hosts whose P2P/SHM edges
    // name it (rank 9 behind "8[0] -> 9[1] via P2P" on node B says nothing
    // about node A's rank 1 on GPU 1).
    bool witness = false;
    const std::string here = e->subject.host.value_or("");
    for (int r : ranks_of_dev[td])
      if (r != tr && (host_of_rank.count(r) ? host_of_rank[r] == here : peer_hosts[r].count(here) > 0)) witness = true;
    const bool inferred = all_devs.size() > 1 && witness;
    if (!proven && !inferred) continue;
    // Ranks that must be on different machines but log the same host name:
    // the nodes share a name. Different names taken for one host: NCCL's
    // host identity (hash of a name prefix) collided, a defect of NCCL.
    const bool same_name = !proven && host_of_rank.count(fr) && host_of_rank.count(tr) && !host_of_rank[fr].empty() &&
                           host_of_rank[fr] == host_of_rank[tr];
    Hypothesis h;
    h.cause = same_name ? "duplicate_hostname_across_nodes" : "nccl_bug";
    h.culprit.host = e->subject.host;
    h.culprit.rank = fr;
    h.weight = proven ? 100 : 80;
    h.evidence_key = "cross_host_p2p";
    h.finding_ids = {"tree.cross_host_p2p"};
    std::string others;
    for (int r : ranks_of_dev[td])
      if (r != tr) others += (others.empty() ? "" : ",") + std::to_string(r);
    h.why = "rank " + std::to_string(fr) + " reaches rank " + std::to_string(tr) + " via " + transport +
            (proven ? " although they run on different hosts"
                    : " although rank " + std::to_string(tr) + " uses GPU " + std::to_string(td) +
                          " like rank(s) " + others + ": NCCL took two hosts for one (host identity collision)");
    h.derived = derived_finding("tree.cross_host_p2p", Layer::nccl, Severity::critical, h.why, h.culprit, {e});
    h.order = e->provenance.line;
    Hypothesis t = h;
    t.cause = "pcie_topology_misdetected";
    t.weight = 10;
    t.derived.reset();
    out.push_back(std::move(h));
    out.push_back(std::move(t));
    return true;  // one edge proves it
  }
  return false;
}

}  // namespace

void cross_host_p2p(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  // Ranks in channel lines are the communicator's own (the world, data- and
  // tensor-parallel groups each have a rank 0): edges are judged per comm.
  // Lines whose comm is unknown (a paste without the init lines) form one group.
  std::map<std::string, std::vector<ChannelEdge>> by_comm;
  for (const auto* e : set.of_kind("log.channel_edge")) {
    const auto fr = int_field(e->data, "from_rank"), fd = int_field(e->data, "from_dev");
    const auto tr = int_field(e->data, "to_rank"), td = int_field(e->data, "to_dev");
    if (!fr || !fd || !tr || !td) continue;
    ChannelEdge c{static_cast<int>(*fr), static_cast<int>(*fd), static_cast<int>(*tr), static_cast<int>(*td),
                  str_field(e->data, "transport").value_or(""), e};
    if (str_field(e->data, "direction").value_or("") == "receive") {
      std::swap(c.local, c.peer);
      std::swap(c.local_dev, c.peer_dev);
    }
    by_comm[str_field(e->data, "comm").value_or("")].push_back(std::move(c));
  }
  for (const auto& [comm, edges] : by_comm)
    if (cross_host_p2p_in(edges, out)) return;
}

// A silent hang right after init on GPUs that use P2P: NCCL selected P2P (the
// driver says peers can access each other), init completed, no WARN, no
// error, and no collective ever completed. Peer writes that never land are
// what IOMMU DMA remapping or PCIe ACS redirection do; host.iommu and
// pcie.acs evidence, when present, separate them.
void p2p_silent_hang(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  bool p2p = false, mixed = false;
  std::set<int> p2p_devs;
  for (const auto* e : set.of_kind("log.peer_access")) {
    if (bool_field(e->data, "can").value_or(false)) {
      p2p = true;
      p2p_devs.insert(static_cast<int>(int_field(e->data, "from_dev").value_or(-1)));
      p2p_devs.insert(static_cast<int>(int_field(e->data, "to_dev").value_or(-1)));
    } else {
      mixed = true;
    }
  }
  for (const auto* e : set.of_kind("log.channel_edge"))
    if (str_field(e->data, "transport").value_or("").rfind("P2P", 0) == 0) p2p = true;
  if (!p2p) return;
  bool init = false, results = false;
  const Evidence* where = nullptr;
  for (const auto* e : set.of_kind("log.init")) {
    const auto what = str_field(e->data, "what").value_or("");
    if (what == "results") results = true;
    else init = true, where = e;
  }
  if (!init || results || any_causal(set) || any_hardware_fault(set)) return;
  // The watchdog times out the oldest unfinished collective: SeqNum N > 1
  // means the N-1 before it completed, so P2P did deliver.
  for (const auto& f : set.findings)
    if (f.id.find("watchdog") != std::string::npos && f.subject.seq && *f.subject.seq > 1) return;
  // WARNs that only say an optional library is absent do not break P2P.
  for (const auto* e : set.of_kind("log.warn")) {
    const auto t = str_field(e->data, "text").value_or("");
    if (t.find("Failed to open libibverbs") == std::string::npos && t.find("NET/Plugin") == std::string::npos)
      return;
  }
  Subject culprit;
  culprit.host = where->subject.host;
  std::string gpus;
  for (int d : p2p_devs)
    if (d >= 0) gpus += (gpus.empty() ? "" : ",") + std::to_string(d);
  if (!gpus.empty()) culprit.gpu = gpus;
  const std::string why = "init completed with P2P between GPUs " + (gpus.empty() ? std::string("?") : gpus) +
                          ", then no collective completed and no NCCL WARN or error: peer writes are not arriving";
  auto add = [&](const char* cause, double w, const char* key, std::string text, bool with_finding) {
    Hypothesis h;
    h.cause = cause;
    h.culprit = culprit;
    h.weight = w;
    h.evidence_key = key;
    h.finding_ids = {"tree.p2p_silent_hang"};
    h.why = std::move(text);
    if (with_finding)
      h.derived = derived_finding("tree.p2p_silent_hang", Layer::hardware, Severity::error, why, culprit, {where});
    h.order = where->provenance.line;
    out.push_back(std::move(h));
  };
  // IOMMU first: DMA remapping is on by default on many distributions and
  // silently drops peer writes (NVIDIA/nccl#257); ACS is the alternative the
  // next steps separate (lspci ACSCtl).
  add("iommu_blocks_p2p", 40, "p2p_silent_hang", why, true);
  add("pcie_acs_p2p_blocked", 12, "p2p_silent_hang", why, false);
  add("gpu_driver_p2p_bug", 4, "p2p_silent_hang", why, false);
  if (mixed) {
    const std::string t = "some GPU pairs cannot access each other: the GPUs sit behind different PCIe switches / "
                          "root ports, P2P runs through the switches";
    add("iommu_blocks_p2p", 2, "p2p_split_topology", t, false);
    add("pcie_acs_p2p_blocked", 2, "p2p_split_topology", t, false);
  }
}

// The HCA a verbs failure is about is the one NCCL selected: when a process
// selected exactly one, it is the culprit NIC.
void selected_hca(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  const auto fails = set.findings_with("log.ibv_enodev");
  if (fails.empty()) return;
  for (const auto* e : set.of_kind("log.net_ib")) {
    const auto& devs = e->data.value("devices", nlohmann::json::array());
    if (devs.size() != 1 || !devs[0].is_object()) continue;
    Hypothesis h;
    h.cause = "unusable_hca_selected";
    h.culprit.host = e->subject.host;
    h.culprit.nic = devs[0].value("nic", "");
    h.culprit.port = devs[0].value("port", 1);
    h.weight = 2;
    h.evidence_key = "single_hca_selected";
    h.finding_ids = {"log.ibv_enodev"};
    h.why = "NCCL selected only " + *h.culprit.nic + " (" + devs[0].value("link", "") + ") and verbs calls on it "
            "fail with ENODEV";
    out.push_back(std::move(h));
    return;
  }
}

}  // namespace ccdiag::rules
