// Rank-level rules: process state (ranks.process: a dead rank, one in
// uninterruptible sleep) and flight-recorder findings without supports
// (fr.*). Who is stuck where in the stacks is the census's (analysis/census:
// the odd rank out and what it does); its findings carry their own votes.
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

  // Where each rank's threads are (stacks.process) is judged by the stack
  // census (analysis/census), from the frames the stacks collector writes;
  // its findings vote through finding_support.
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
