// Rule: a c10d store client that could not connect to an address of its own
// host. MASTER_ADDR=127.0.0.1 / localhost is a choice made by hand for a
// single-host job: no interface is picked, no firewall sits on loopback and
// no name resolves, so the network causes usually behind an unreachable
// rendezvous do not apply. Nothing listened at that port: MASTER_PORT differs
// between ranks, the store host never started or died, or MASTER_ADDR says
// localhost on a machine that is not the store host. The symptom,
// bootstrap_unreachable, is then the verdict, not the interface behind it.
// (127.0.1.1 is excluded: Debian maps the host name there, and a peer handed
// that address is hostname_resolves_to_loopback.)
#include <utility>

#include "analysis/tree/rules/rules.hpp"

namespace ccdiag::rules {

namespace {

bool explicit_loopback(const std::string& addr) {
  return addr == "127.0.0.1" || addr == "localhost" || addr == "::1" || addr == "0:0:0:0:0:0:0:1";
}

}  // namespace

void store_target_local(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  for (const auto* e : set.of_kind("log.store_connect_failed")) {
    const auto addr = str_field(e->data, "addr");
    const auto port = int_field(e->data, "port");
    if (!addr || !port || !explicit_loopback(*addr)) continue;
    const std::string why = "a store client could not connect to " + *addr + ":" + std::to_string(*port) +
                            ", an address of its own host: nothing listened there (MASTER_PORT not the store "
                            "host's, the store host not up, or MASTER_ADDR=localhost on another machine), "
                            "not an interface, a firewall or name resolution";
    Subject culprit = e->subject;
    culprit.rank.reset();
    // Against the causes behind an unreachable rendezvous (below the 1:4
    // that keeps the tree from naming them in its place), one key for all.
    bool first = true;
    for (const char* cause : {"wrong_network_interface", "firewall_blocked_ports", "hostname_resolves_to_loopback",
                              "duplicate_hostname_across_nodes"}) {
      Hypothesis h;
      h.cause = cause;
      h.culprit = culprit;
      h.weight = 0.2;
      h.evidence_key = "store_target_local";
      h.finding_ids = {"tree.store_target_local"};
      h.why = why;
      h.order = e->provenance.line;
      if (std::exchange(first, false))
        h.derived = derived_finding("tree.store_target_local", Layer::framework, Severity::warning, why, culprit, {e});
      out.push_back(std::move(h));
    }
    return;
  }
}

}  // namespace ccdiag::rules
