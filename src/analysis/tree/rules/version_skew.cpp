// Rule: hosts that run a different NCCL version than the majority
// (host.versions evidence from bundles). The minority host is the culprit; a
// tie names no culprit host and gives a weaker ratio.
#include <map>

#include "analysis/tree/rules/rules.hpp"

namespace ccdiag::rules {

void version_skew(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  std::map<std::string, std::vector<std::string>> hosts_by_version;
  for (const auto* e : set.of_kind("host.versions")) {
    if (!e->availability.is_ok()) continue;
    const auto it = e->data.find("nccl_version");
    if (it == e->data.end() || !it->is_string() || it->get<std::string>().empty()) continue;
    hosts_by_version[it->get<std::string>()].push_back(e->subject.host.value_or("?"));
  }
  if (hosts_by_version.size() < 2) return;
  std::string majority;
  size_t most = 0;
  for (const auto& [v, hosts] : hosts_by_version)
    if (hosts.size() > most) most = hosts.size(), majority = v;
  for (const auto& [v, hosts] : hosts_by_version) {
    if (v == majority) continue;
    for (const auto& host : hosts) {
      Hypothesis h;
      h.cause = "nccl_version_mismatch";
      h.culprit.host = host;
      // A clear minority running another libnccl is a strong, specific
      // explanation of a hang (NCCL does not check versions across hosts
      // before 2.x init exchanges); a tie cannot say which side is odd.
      h.weight = hosts.size() < most ? 150.0 : 8.0;
      h.evidence_key = "version_skew";
      h.finding_ids = {"config.nccl_version_skew"};
      h.why = "host " + host + " has NCCL " + v + " while " + std::to_string(most) + " host(s) have " + majority;
      out.push_back(std::move(h));
    }
  }
}

}  // namespace ccdiag::rules
