// The layered decision tree (docs/decision-tree.md): from the findings and hypotheses
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

// Combines hypotheses into per-cause scores, best first. A cause id the
// catalogue lacks is a rule bug: it is never scored (no invented causes) and
// is listed in explain->unknown_causes (tests/unit/tree_catalogue_ids.cpp
// fails on any such id in the sources). With `explain`, records every
// hypothesis and the odds arithmetic of each cause.
std::vector<CauseScore> score_causes(const std::vector<Hypothesis>& hyps, size_t unchecked_count,
                                     Explain* explain = nullptr);

struct DecideOptions {
  bool explain = false;  // fill Report::explain (`diagnose --explain`)
};

// Runs every rule over the set and builds the report (verdict, chain,
// findings, alternatives, next steps, unchecked). The set is taken by value
// and worked on in place (shadowed findings are marked): a caller done with
// it moves it in; a dense debug log's set holds ~20k evidence items, whose
// copy cost ~80 ms per 100 MB of log.
Report decide(EvidenceSet set, const DecideOptions& options = {});

// The layer an evidence kind belongs to: layer_of_evidence_kind() of the
// evidence registry (ccdiag/evidence_kinds.hpp).

}  // namespace ccdiag
