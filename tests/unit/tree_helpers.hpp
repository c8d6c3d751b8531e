// Builders for decision-tree unit tests: evidence and findings as collectors
// and log analysers produce them.
#pragma once

#include <string>

#include "ccdiag/evidence_set.hpp"

namespace tree_test {

inline ccdiag::Evidence ev(const std::string& kind, const std::string& host, nlohmann::json data) {
  ccdiag::Evidence e;
  e.kind = kind;
  e.subject.host = host;
  e.provenance.source = kind;
  e.data = std::move(data);
  return e;
}

inline ccdiag::Finding finding(const std::string& id, ccdiag::Layer layer, ccdiag::FindingRole role,
                               std::vector<ccdiag::CauseSupport> supports, const std::string& host = "node1") {
  ccdiag::Finding f;
  f.id = id;
  f.layer = layer;
  f.severity = ccdiag::Severity::error;
  f.role = role;
  f.summary = id;
  f.subject.host = host;
  f.supports = std::move(supports);
  return f;
}

}  // namespace tree_test
