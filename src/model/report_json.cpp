#include "ccdiag/report.hpp"

namespace ccdiag {

std::string_view to_string(StepOutcome o) {
  switch (o) {
    case StepOutcome::explains: return "explains";
    case StepOutcome::consistent: return "consistent";
    case StepOutcome::clear: return "clear";
    case StepOutcome::unchecked: return "unchecked";
    case StepOutcome::skipped: return "skipped";
  }
  return "unchecked";
}

void to_json(nlohmann::json& j, const Verdict& v) {
  j = nlohmann::json{{"root_cause", v.root_cause},
                     {"layer", v.layer ? nlohmann::json(std::string(to_string(*v.layer))) : nlohmann::json()},
                     {"confidence", v.confidence},
                     {"culprit", v.culprit},
                     {"summary", v.summary}};
  if (!v.basis.empty()) j["basis"] = v.basis;
}

void to_json(nlohmann::json& j, const ChainStep& c) {
  j = nlohmann::json{{"layer", std::string(to_string(c.layer))},
                     {"outcome", std::string(to_string(c.outcome))},
                     {"note", c.note},
                     {"finding_ids", c.finding_ids}};
}

void to_json(nlohmann::json& j, const Alternative& a) {
  j = nlohmann::json{{"root_cause", a.root_cause}, {"score", a.score}, {"why", a.why}};
}

void to_json(nlohmann::json& j, const NextStep& n) {
  j = nlohmann::json{{"action", n.action}};
  if (!n.command.empty()) j["command"] = n.command;
}

void to_json(nlohmann::json& j, const Unchecked& u) {
  j = nlohmann::json{{"what", u.what}, {"reason", u.reason}};
}

void to_json(nlohmann::json& j, const Report& r) {
  j = nlohmann::json{{"schema_version", r.schema_version},
                     {"ccdiag_version", r.ccdiag_version},
                     {"verdict", r.verdict},
                     {"chain", r.chain},
                     {"findings", r.findings},
                     {"alternatives", r.alternatives},
                     {"next_steps", r.next_steps},
                     {"unchecked", r.unchecked},
                     {"inputs", r.inputs},
                     {"hosts", r.hosts}};
}

}  // namespace ccdiag
