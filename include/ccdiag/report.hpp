// Report: the one model every renderer (text, json, markdown) prints
// (its JSON contract: docs/json.md and docs/schema/report.schema.json).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/evidence.hpp"
#include "ccdiag/finding.hpp"
#include "ccdiag/layer.hpp"
#include "ccdiag/subject.hpp"

namespace ccdiag {

// Bumped only on a breaking change of the JSON contract; additions keep it.
inline constexpr int kSchemaVersion = 1;

inline constexpr const char* kInsufficientEvidence = "insufficient_evidence";
inline constexpr const char* kNoProblemFound = "no_problem_found";

struct Verdict {
  std::string root_cause = kInsufficientEvidence;  // catalogue id
  std::optional<Layer> layer;                      // unset for no_problem_found / insufficient_evidence
  double confidence = 0.0;                         // 0..1
  Subject culprit;
  std::string summary;
  // How the cause was reached: "evidence" (the evidence singles it out,
  // confidence >= kMinConfidence), "leading_candidate" (weak evidence, but
  // one cause clearly ahead of every other: named, at low confidence, so the
  // user has a first thing to check), empty for insufficient_evidence and
  // no_problem_found.
  std::string basis;
  // For a cause named because it usually lies behind a symptom that the
  // inputs show (catalogue explained_by): that symptom's id. Empty otherwise.
  std::string mechanism;
};

// One step of the layered walk: what the tree concluded at that layer.
enum class StepOutcome { explains, consistent, clear, unchecked, skipped };
std::string_view to_string(StepOutcome o);

struct ChainStep {
  Layer layer = Layer::framework;
  StepOutcome outcome = StepOutcome::unchecked;
  std::string note;                    // why, in one line
  std::vector<std::string> finding_ids;
};

struct Alternative {
  std::string root_cause;
  double score = 0.0;                  // same scale as verdict.confidence
  std::string why;
};

struct NextStep {
  std::string action;                  // "Drain host node7 and reset GPU 3"
  std::string command;                 // exact command to run, may be empty
};

// Why a part of the host or of the inputs was not checked. `skipped`: the
// component is not there (no GPU, no RDMA NIC, no rank on this host), so
// nothing was missed; every other state means something may have been.
enum class UncheckedState { skipped, unavailable, timeout, error, unknown };
const char* to_string(UncheckedState s);
std::optional<UncheckedState> unchecked_state_from(std::string_view name);
UncheckedState unchecked_state_of(AvailabilityState s);

struct Unchecked {
  std::string what;                    // "NVML", "kernel log", "bundle node3"
  UncheckedState state = UncheckedState::unavailable;
  std::string reason;                  // "libnvidia-ml.so.1 not found"
};

// From "state: reason" text: the JSON of bundles written before the state was
// a field of its own. Text without a known state is `unavailable`.
Unchecked unchecked_from_text(std::string what, std::string_view text);

// `diagnose --explain`: how the verdict was scored. Every hypothesis a rule
// emitted, and per candidate cause the odds arithmetic: prior odds times one
// likelihood ratio per independent evidence key (the most extreme ratio of
// that key), over 1 + the sum of all candidates' odds, times the factor for
// probes that could not run (docs/decision-tree.md §2).
struct ExplainHypothesis {
  std::string rule;                    // the rule that emitted it (finding_support, pcie_state, ...)
  std::string cause;
  double ratio = 1.0;
  std::string evidence_key;
  Subject culprit;
  std::string why;
  bool known_cause = true;             // false: not in the catalogue, dropped from scoring
  bool counted = false;                // the ratio that counts for its (cause, key); false: a weaker one of the same key
};

struct ExplainFactor {
  std::string evidence_key;
  double ratio = 1.0;                  // as multiplied (clamped to [1e-3, 1e4])
  std::string rule;
  std::string why;
};

struct ExplainCause {
  std::string cause;
  double prior = 0.0;
  double prior_odds = 0.0;
  std::vector<ExplainFactor> factors;
  double odds = 0.0;                   // prior_odds x the product of the factors
  double confidence = 0.0;             // min(0.98, odds / (1 + total_odds) x unchecked_factor)
  bool candidate = false;              // false: only counter-evidence (never a verdict)
};

struct Explain {
  std::vector<ExplainHypothesis> hypotheses;
  std::vector<ExplainCause> causes;    // best first
  double total_odds = 1.0;             // 1 + the sum of the candidates' odds
  size_t unchecked = 0;                // probes that could not run
  double unchecked_factor = 1.0;       // max(0.8, 0.97^unchecked)
  std::vector<std::string> unknown_causes;  // cause ids rules emitted that the catalogue lacks (dropped)
};

struct Report {
  int schema_version = kSchemaVersion;
  std::string ccdiag_version;
  Verdict verdict;
  std::vector<ChainStep> chain;
  std::vector<Finding> findings;
  std::vector<Alternative> alternatives;
  std::vector<NextStep> next_steps;
  std::vector<Unchecked> unchecked;
  std::vector<std::string> inputs;     // bundles and logs read
  std::vector<std::string> hosts;      // hosts covered
  std::optional<Explain> explain;      // only with `diagnose --explain`
};

void to_json(nlohmann::json& j, const Verdict& v);
void to_json(nlohmann::json& j, const ChainStep& c);
void to_json(nlohmann::json& j, const Alternative& a);
void to_json(nlohmann::json& j, const NextStep& n);
void to_json(nlohmann::json& j, const Unchecked& u);
void to_json(nlohmann::json& j, const Explain& e);
void to_json(nlohmann::json& j, const Report& r);

}  // namespace ccdiag
