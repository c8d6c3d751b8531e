// Hypothesis: one rule's vote that a catalogue cause explains the incident,
// for a culprit, with a likelihood ratio. Rules only produce hypotheses; the
// tree combines them (decision_tree.hpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ccdiag/evidence_set.hpp"
#include "ccdiag/subject.hpp"

namespace ccdiag {

struct Hypothesis {
  std::string cause;                    // catalogue id
  Subject culprit;
  double weight = 1.0;                  // likelihood ratio: > 1 supports, < 1 argues against
  std::string evidence_key;             // independent evidence is multiplied once per key
  std::vector<std::string> finding_ids; // findings it rests on (for the chain)
  std::string why;                      // one line for the report
  std::optional<int64_t> order;         // earlier = more likely the first failure
  // A finding the rule derived (a skew audit outlier, a cross-finding
  // conclusion) to show in the report; decide() adds each distinct one once.
  std::optional<Finding> derived;
  std::string rule;                     // the rule that emitted it (set by decide(), for --explain)
};

struct RuleInfo {
  std::string name;
  std::string description;
  std::function<void(const EvidenceSet&, std::vector<Hypothesis>&)> run;
};

// Every rule, in a fixed order (rules/registry.cpp).
const std::vector<RuleInfo>& all_rules();

}  // namespace ccdiag
