// Report: the one model every renderer (text, json, markdown) prints
// (design.md §2.1 is the JSON contract; docs/schema/report.schema.json).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

struct Unchecked {
  std::string what;                    // "NVML", "kernel log", "bundle node3"
  std::string reason;                  // "skipped: libnvidia-ml.so.1 not found"
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
};

void to_json(nlohmann::json& j, const Verdict& v);
void to_json(nlohmann::json& j, const ChainStep& c);
void to_json(nlohmann::json& j, const Alternative& a);
void to_json(nlohmann::json& j, const NextStep& n);
void to_json(nlohmann::json& j, const Unchecked& u);
void to_json(nlohmann::json& j, const Report& r);

}  // namespace ccdiag
