// Rank-level rules: process state (ranks.process), the stack census
// (stacks.process: where each rank's main thread is) and flight-recorder
// findings (fr.*). The symptom "who is stuck where" comes from here: the
// majority of ranks wait in one collective, the odd rank out is the culprit,
// and what it is doing says which framework cause it is.
#include <map>
#include <tuple>

#include "analysis/tree/rules/rules.hpp"

namespace ccdiag::rules {

namespace {

Hypothesis hyp(const char* cause, const Subject& culprit, double w, std::string key, std::string why) {
  Hypothesis h;
  h.cause = cause;
  h.culprit = culprit;
  h.weight = w;
  h.evidence_key = std::move(key);
  h.finding_ids = {"tree.rank_census"};
  h.why = std::move(why);
  return h;
}

std::string rank_name(const Subject& s) {
  return s.rank ? "rank " + std::to_string(*s.rank) : "pid " + std::to_string(s.pid.value_or(0));
}

}  // namespace

void rank_census(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  // ranks.process {rank, alive, state, exit_code, signal}
  for (const auto* e : set.of_kind("ranks.process")) {
    if (!e->availability.is_ok()) continue;
    Subject s = e->subject;
    if (auto r = int_field(e->data, "rank")) s.rank = static_cast<int>(*r);
    const auto alive = bool_field(e->data, "alive");
    const auto state = str_field(e->data, "state").value_or("");
    if ((alive && !*alive) || state == "Z") {
      auto h = hyp("rank_process_died", s, 40, "process_dead:" + rank_name(s),
                   rank_name(s) + " on " + host_name(s) + " is no longer running" +
                       (e->data.contains("signal") ? " (signal " + str_field(e->data, "signal").value_or("") + ")"
                                                   : std::string()));
      h.derived = derived_finding("tree.rank_process_died", Layer::framework, Severity::critical, h.why, s, {e});
      out.push_back(std::move(h));
    } else if (state == "D") {
      out.push_back(hyp("rank_stuck_in_host_code", s, 6, "process_dstate:" + rank_name(s),
                        rank_name(s) + " on " + host_name(s) + " is in uninterruptible sleep (D): blocked in I/O"));
    }
  }

  // stacks.process {rank, location, process_group, seq, op, top}
  struct Where {
    const Evidence* e;
    Subject s;
    std::string location, pg, op;
    int64_t seq;
  };
  std::vector<Where> ws;
  for (const auto* e : set.of_kind("stacks.process")) {
    if (!e->availability.is_ok()) continue;
    Where w{e, e->subject, str_field(e->data, "location").value_or(""), str_field(e->data, "process_group").value_or(""),
            str_field(e->data, "op").value_or(""), int_field(e->data, "seq").value_or(-1)};
    if (auto r = int_field(e->data, "rank")) w.s.rank = static_cast<int>(*r);
    if (w.location.empty()) continue;
    ws.push_back(std::move(w));
  }
  if (ws.size() < 2) return;
  std::map<std::tuple<std::string, int64_t, std::string>, size_t> groups;
  for (const auto& w : ws)
    if (w.location == "collective") ++groups[{w.pg, w.seq, w.op}];
  if (groups.empty()) return;
  auto major = groups.begin();
  for (auto it = groups.begin(); it != groups.end(); ++it)
    if (it->second > major->second) major = it;
  const auto& [mpg, mseq, mop] = major->first;
  const std::string majority = std::to_string(major->second) + " rank(s) wait in " + (mop.empty() ? "a collective" : mop) +
                               (mseq >= 0 ? " seq " + std::to_string(mseq) : "") +
                               (mpg.empty() ? "" : " of process group " + mpg);
  size_t odd = 0;
  for (const auto& w : ws) {
    Subject s = w.s;
    s.process_group = mpg.empty() ? std::nullopt : std::optional<std::string>(mpg);
    if (mseq >= 0) s.seq = mseq;
    const std::string top = str_field(w.e->data, "top").value_or("");
    const std::string at = top.empty() ? w.location : w.location + " (" + top + ")";
    std::optional<Hypothesis> h;
    if (w.location != "collective") {
      if (w.location == "exited") continue;  // ranks.process speaks for dead ranks
      h = hyp("rank_stuck_in_host_code", s, 40, "census:" + rank_name(s),
              majority + "; " + rank_name(s) + " on " + host_name(s) + " is in its own code: " + at);
      if (w.location == "idle" || w.location == "training_loop" || w.location == "past_collective")
        h = hyp("rank_skips_collective", s, 25, "census:" + rank_name(s),
                majority + "; " + rank_name(s) + " on " + host_name(s) + " never entered it and runs on: " + at);
    } else if (w.pg != mpg) {
      h = hyp("wrong_process_group", s, 60, "census:" + rank_name(s),
              majority + "; " + rank_name(s) + " waits in a collective of process group " + w.pg);
    } else if (w.seq == mseq && w.op != mop) {
      h = hyp("mismatched_collectives", s, 30, "census:" + rank_name(s),
              majority + "; " + rank_name(s) + " runs " + w.op + " at the same sequence number");
    } else if (w.seq > mseq && mseq >= 0) {
      h = hyp("rank_skips_collective", s, 25, "census:" + rank_name(s),
              majority + "; " + rank_name(s) + " is already at seq " + std::to_string(w.seq) + ": it skipped one");
    } else if (w.seq < mseq) {
      h = hyp("straggler_or_timeout_too_short", s, 10, "census:" + rank_name(s),
              majority + "; " + rank_name(s) + " is behind at seq " + std::to_string(w.seq));
    }
    if (!h) continue;
    ++odd;
    h->derived = derived_finding("tree.rank_census", Layer::framework, Severity::error, h->why, s, {w.e});
    out.push_back(std::move(*h));
  }
  if (odd == 0) {
    // Every rank is inside the same collective: the framework agrees, the
    // data path does not move. That argues against the framework causes.
    Subject s;
    if (!mpg.empty()) s.process_group = mpg;
    if (mseq >= 0) s.seq = mseq;
    const std::string why = "every rank (" + majority + ") is inside the same collective: the framework agrees";
    for (const char* c : {"rank_skips_collective", "mismatched_collectives", "rank_stuck_in_host_code",
                          "wrong_process_group"})
      out.push_back(hyp(c, s, 0.15, "census_all_in_collective", why));
  }
}

// Flight-recorder findings (fr.*) vote through finding_support when they
// carry `supports`; this rule reads their `fields.kind` for those that do not.
void flight_recorder(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  for (const auto* f : set.findings_with("fr.")) {
    if (!f->supports.empty() || f->role == FindingRole::cascade || f->role == FindingRole::context) continue;
    const auto kind = str_field(f->fields, "kind").value_or("");
    Subject s = f->subject;
    if (f->fields.contains("ranks") && f->fields["ranks"].is_array() && !f->fields["ranks"].empty() &&
        f->fields["ranks"][0].is_number_integer() && !s.rank)
      s.rank = f->fields["ranks"][0].get<int>();
    auto add = [&](const char* cause, double w) {
      Hypothesis h = hyp(cause, s, w, "fr:" + kind, f->summary);
      h.finding_ids = {f->id};
      h.order = f->order;
      out.push_back(std::move(h));
    };
    if (kind == "missing_ranks") add("rank_skips_collective", 15);
    else if (kind == "type_mismatch" || kind == "size_mismatch" || kind == "dtype_mismatch") add("mismatched_collectives", 30);
    else if (kind == "slow_rank") add("straggler_or_timeout_too_short", 15);
    else if (kind == "hang_no_completion") {
      add("rank_skips_collective", 0.3);
      add("mismatched_collectives", 0.3);
    }
  }
}

}  // namespace ccdiag::rules
