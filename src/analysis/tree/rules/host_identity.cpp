// Rule: one host name, two machines. NCCL (and MPI, NVSHMEM) take ranks that
// report the same host name for ranks of one machine: they pick P2P/CUDA IPC
// or shared memory between them, which fails or hangs across machines. The
// logs show it without any failure line: processes under one host name
// advertise different addresses on the same interface ("Bootstrap : Using
// eth1:10.0.0.1<0>" here, "eth1:10.0.0.2<0>" there). One machine has one
// address per interface for NCCL (the first it finds), so two addresses on
// one name are two machines.
#include <iterator>
#include <map>
#include <set>

#include "analysis/tree/rules/rules.hpp"

namespace ccdiag::rules {

void one_name_two_addresses(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  // host -> interface -> address -> the first evidence that shows it
  std::map<std::string, std::map<std::string, std::map<std::string, const Evidence*>>> seen;
  for (const auto* e : set.of_kind("log.iface_addr")) {
    const std::string host = e->subject.host.value_or("");
    const auto ifname = str_field(e->data, "ifname");
    const auto addr = str_field(e->data, "addr");
    // A process's own line names its host; a line without one says nothing.
    // Loopback is no machine's identity ("lo:127.0.0.1" in every container).
    if (host.empty() || !ifname || !addr || *ifname == "lo" || addr->rfind("127.", 0) == 0) continue;
    seen[host][*ifname].emplace(*addr, e);
  }
  for (const auto& [host, ifaces] : seen)
    for (const auto& [ifname, addrs] : ifaces) {
      if (addrs.size() < 2) continue;
      const Evidence* a = addrs.begin()->second;
      const Evidence* b = std::next(addrs.begin())->second;
      Hypothesis h;
      h.cause = "duplicate_hostname_across_nodes";
      h.culprit.host = host;
      // Strong, not certain: hosts that share a name break NCCL's notion of
      // a node whatever else went wrong; an excerpt whose host names were
      // all replaced by one placeholder reads the same.
      h.weight = 30;
      h.evidence_key = "one_name_two_addresses";
      h.finding_ids = {"tree.one_name_two_addresses"};
      h.why = "processes under host name " + host + " advertise " + std::to_string(addrs.size()) +
              " different addresses on " + ifname + " (" + addrs.begin()->first + ", " +
              std::next(addrs.begin())->first + "): two machines share one host name";
      h.derived = derived_finding("tree.one_name_two_addresses", Layer::system_config, Severity::critical, h.why,
                                  h.culprit, {a, b});
      h.order = a->provenance.line;
      out.push_back(std::move(h));
      return;  // one name is enough to say it
    }
}

}  // namespace ccdiag::rules
