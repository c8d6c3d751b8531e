// The rules of the decision tree. Each reads the EvidenceSet and appends
// hypotheses; none does I/O. Register a new rule in registry.cpp.
#pragma once

#include "analysis/tree/hypothesis.hpp"

namespace ccdiag::rules {

void finding_support(const EvidenceSet& set, std::vector<Hypothesis>& out);
void version_skew(const EvidenceSet& set, std::vector<Hypothesis>& out);
void dev_shm_size(const EvidenceSet& set, std::vector<Hypothesis>& out);

}  // namespace ccdiag::rules
