// The layered decision tree (design.md §3): from the findings and hypotheses
// to one verdict, its culprit, the chain walked per layer, the alternatives
// and the next steps. Pure: no I/O, deterministic.
//
// Scoring: each cause starts at its catalogue prior (as odds); each
// independent piece of evidence (one per evidence_key) multiplies the odds by
// its likelihood ratio. Confidence = odds / (1 + sum of all causes' odds), so
// two equally supported causes share the mass instead of both looking sure.
// What could not be checked lowers confidence; below kMinConfidence the
// verdict is insufficient_evidence, with the best candidates as alternatives.
#pragma once

#include "ccdiag/evidence_set.hpp"
#include "analysis/tree/hypothesis.hpp"
#include "ccdiag/evidence_kinds.hpp"
#include "ccdiag/report.hpp"

namespace ccdiag {

inline constexpr double kMinConfidence = 0.40;

struct CauseScore {
  std::string cause;
  double odds = 0.0;
  double confidence = 0.0;
  Subject culprit;
  std::vector<const Hypothesis*> support;
};

// Combines hypotheses into per-cause scores, best first.
std::vector<CauseScore> score_causes(const std::vector<Hypothesis>& hyps, size_t unchecked_count);

// Runs every rule over the set and builds the report (verdict, chain,
// findings, alternatives, next steps, unchecked).
Report decide(const EvidenceSet& set);

// The layer an evidence kind belongs to: layer_of_evidence_kind() of the
// evidence registry (ccdiag/evidence_kinds.hpp).

}  // namespace ccdiag
