// Rule: every primary finding that names causes it supports (a log signature,
// an Xid, a flight-recorder mismatch) votes for them, with its subject as the
// culprit (not the rank that reported a timeout: it waited for the culprit). Cascades and context never vote: a peer's "remote process exited"
// is a consequence, not a cause.
#include "analysis/tree/rules/rules.hpp"

namespace ccdiag::rules {

namespace {

// "connecting to address with family N is neither AF_INET nor AF_INET6" means
// NCCL was handed an address it never filled in (no interface matched
// NCCL_SOCKET_IFNAME) or one a peer sent that is garbage. When this host's
// bootstrap did find an interface ("Bootstrap : Using eth0:<ip>"), the address
// came from the peer's connection info: the two sides' exchanges did not pair
// up (unpaired or ungrouped send/recv, different NCCL builds), not an interface.
std::optional<std::pair<std::vector<CauseSupport>, std::string>> interface_was_found(const EvidenceSet& set,
                                                                                     const Finding& f) {
  // The catalogue signature and the tree's own log signal for the same line.
  if (f.id != "nccl.socket.bad_address_family" && f.id != "log.socket_family_invalid") return std::nullopt;
  for (const auto* e : set.of_kind("log.bootstrap")) {
    if (f.subject.host && e->subject.host && *f.subject.host != *e->subject.host) continue;
    const auto ifname = str_field(e->data, "ifname").value_or("");
    if (ifname.empty() || str_field(e->data, "addr").value_or("").empty()) continue;
    return std::make_pair(
        std::vector<CauseSupport>{{"user_code_bug", 3}, {"nccl_version_mismatch", 2}, {"nccl_bug", 2},
                                  {"wrong_network_interface", 1}},
        f.summary + "; but the bootstrap found interface " + ifname +
            ", so the address came from a peer's connection info that did not pair up");
  }
  return std::nullopt;
}

}  // namespace

void finding_support(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  for (const auto& f : set.findings) {
    if (f.role == FindingRole::cascade || f.role == FindingRole::context) continue;
    const auto found = interface_was_found(set, f);
    // A collective timeout is logged by the ranks that waited: the place (the
    // collective, its group) is evidence, the reporting rank is a victim.
    Subject culprit = f.subject;
    if (f.fields.is_object() && f.fields.value("reporter_waits", false)) {
      culprit.rank.reset();
      culprit.pid.reset();
      culprit.tid.reset();
      culprit.host.reset();
    }
    for (const auto& s : found ? found->first : f.supports) {
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
      h.why = found ? found->second : f.summary;
      h.order = f.order;
      out.push_back(std::move(h));
    }
  }
}

}  // namespace ccdiag::rules
