// The root-cause catalogue (docs/decision-tree.md): stable snake_case IDs, each with its
// layer, a one-line description, a prior, the evidence that supports and
// contradicts it, and next steps. docs/root-causes.md is generated from it
// (`ccdiag diagnose --list-causes --markdown`).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ccdiag/layer.hpp"
#include "ccdiag/report.hpp"

namespace ccdiag {

struct CauseStep {
  std::string action;
  // Command template; {host} {rank} {gpu} {nic} {port} {seq} {process_group}
  // are replaced with the culprit's fields (left as-is when unknown).
  std::string command;
};

struct CauseInfo {
  std::string id;
  Layer layer;
  std::string description;
  // Prior probability that this cause is behind a hang/timeout before any
  // evidence (anchors-summary C3, split within the layer by engineering judgement).
  double prior;
  std::string supporting;    // the evidence that supports it
  std::string counter;       // the evidence that argues against it
  std::vector<CauseStep> next_steps;
  // For a connectivity symptom (what failed, not why: a bootstrap connect that
  // never succeeds, a retry-exceeded QP): the labelled causes that lie behind
  // it, each with its share of the incidents that show the symptom. When no
  // deeper cause is supported, the verdict names the largest share as a
  // leading candidate (decision_tree.cpp). Empty for every other cause.
  std::vector<std::pair<std::string, double>> explained_by;
};

const std::vector<CauseInfo>& cause_catalogue();
const CauseInfo* find_cause(std::string_view id);

// Next steps of `cause` with the culprit's fields filled into the commands.
std::vector<NextStep> next_steps_for(const CauseInfo& cause, const Subject& culprit);

}  // namespace ccdiag
