// EvidenceSet: everything one diagnosis looks at, from every input (live host,
// bundles, logs), before analysis. Collectors and readers append to it; the
// analysers and the decision tree only read it (analysis is pure: docs/architecture.md).
#pragma once

#include <string>
#include <vector>

#include "ccdiag/evidence.hpp"
#include "ccdiag/finding.hpp"
#include "ccdiag/report.hpp"

namespace ccdiag {

struct EvidenceSet {
  std::vector<Evidence> evidence;
  std::vector<Finding> findings;
  std::vector<Unchecked> unchecked;
  std::vector<std::string> inputs;  // bundle directories and log files read
  std::vector<std::string> hosts;   // distinct hosts covered, in input order

  void add_host(const std::string& host);
  void append(EvidenceSet other);

  // Evidence items of one kind, in input order.
  std::vector<const Evidence*> of_kind(std::string_view kind) const;
  // Findings with this id (exact) or, when `id` ends with '.', this prefix.
  std::vector<const Finding*> findings_with(std::string_view id) const;
};

}  // namespace ccdiag
