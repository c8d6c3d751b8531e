#include "ccdiag/evidence_set.hpp"

#include <algorithm>

namespace ccdiag {

void EvidenceSet::add_host(const std::string& host) {
  if (host.empty()) return;
  if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
}

void EvidenceSet::append(EvidenceSet o) {
  for (auto& e : o.evidence) evidence.push_back(std::move(e));
  for (auto& f : o.findings) findings.push_back(std::move(f));
  for (auto& u : o.unchecked) unchecked.push_back(std::move(u));
  for (auto& i : o.inputs) inputs.push_back(std::move(i));
  for (auto& h : o.hosts) add_host(h);
}

std::vector<const Evidence*> EvidenceSet::of_kind(std::string_view kind) const {
  std::vector<const Evidence*> out;
  for (const auto& e : evidence)
    if (e.kind == kind) out.push_back(&e);
  return out;
}

std::vector<const Finding*> EvidenceSet::findings_with(std::string_view id) const {
  std::vector<const Finding*> out;
  const bool prefix = !id.empty() && id.back() == '.';
  for (const auto& f : findings) {
    if (prefix ? f.id.compare(0, id.size(), id) == 0 : f.id == id) out.push_back(&f);
  }
  return out;
}

}  // namespace ccdiag
