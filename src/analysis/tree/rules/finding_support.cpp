// Rule: every primary finding that names causes it supports (a log signature,
// an Xid, a flight-recorder mismatch) votes for them, with its subject as the
// culprit (not the rank that reported a timeout: it waited for the culprit). Cascades and context never vote: a peer's "remote process exited"
// is a consequence, not a cause.
#include "analysis/tree/rules/rules.hpp"

namespace ccdiag::rules {

void finding_support(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  for (const auto& f : set.findings) {
    if (f.role == FindingRole::cascade || f.role == FindingRole::context) continue;
    // A collective timeout is logged by the ranks that waited: the place (the
    // collective, its group) is evidence, the reporting rank is a victim.
    Subject culprit = f.subject;
    if (f.fields.is_object() && f.fields.value("reporter_waits", false)) {
      culprit.rank.reset();
      culprit.pid.reset();
      culprit.tid.reset();
      culprit.host.reset();
    }
    for (const auto& s : f.supports) {
      Hypothesis h;
      h.cause = s.cause;
      h.culprit = culprit;
      h.weight = s.weight;
      // The same signature repeated on many lines or ranks is one piece of
      // evidence, not many: key by finding id.
      // A tree log signal shadowed by a catalogue finding on the same line
      // shares that finding's key (decision_tree.cpp, mark_shadowed).
      h.evidence_key = f.fields.is_object() && f.fields.contains("shadowed_by") && f.fields["shadowed_by"].is_string()
                           ? f.fields["shadowed_by"].get<std::string>()
                           : f.id;
      h.finding_ids = {f.id};
      h.why = f.summary;
      h.order = f.order;
      out.push_back(std::move(h));
    }
  }
}

}  // namespace ccdiag::rules
