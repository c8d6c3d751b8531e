// Finding: an interpreted fact that matters for the diagnosis ("IB completion
// error status 12 on rank 5 to peer 10.0.0.7", "watchdog timeout on rank 3 at
// SeqNum 88213"). Produced by analysers from Evidence; consumed by the decision
// tree and shown in the report.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/evidence.hpp"
#include "ccdiag/layer.hpp"
#include "ccdiag/subject.hpp"

namespace ccdiag {

enum class Severity { info, warning, error, critical };
std::string_view to_string(Severity s);
std::optional<Severity> parse_severity(std::string_view text);

// A primary finding can be a cause; a cascade is a consequence of a failure
// elsewhere (a peer's "remote process exited"); context only describes the
// set-up (versions, topology) and never causes a verdict by itself.
enum class FindingRole { primary, cascade, symptom, context };
std::string_view to_string(FindingRole r);
std::optional<FindingRole> parse_finding_role(std::string_view text);

// A finding's vote for a root cause: a likelihood ratio (> 1 supports, < 1
// argues against) that the decision tree multiplies into the cause's prior odds.
struct CauseSupport {
  std::string cause;   // catalogue id
  double weight = 1.0; // likelihood ratio
};

struct Finding {
  std::string id;                      // stable: a signature id ("nccl.ib.completion_error") or rule id
  Layer layer = Layer::framework;
  Severity severity = Severity::info;
  FindingRole role = FindingRole::primary;
  std::string summary;                 // one line for humans
  Subject subject;
  std::vector<Provenance> provenance;  // the lines / files / calls it rests on
  std::optional<std::string> time;     // when it happened, as logged
  std::optional<int64_t> order;        // monotone order within its source when time is absent
  nlohmann::json fields = nlohmann::json::object();  // named fields (status, vendor_err, peer, seq...)
  std::optional<std::string> caused_by; // for cascades: describe() of the subject that failed first
  std::vector<CauseSupport> supports;  // causes this finding is evidence for (primary findings only count)
};

// A primary finding about what `e` observed, with its subject, provenance and time.
Finding finding_from(const Evidence& e, std::string id, Layer layer, Severity severity, std::string summary);

void to_json(nlohmann::json& j, const Finding& f);
void from_json(const nlohmann::json& j, Finding& f);

}  // namespace ccdiag
