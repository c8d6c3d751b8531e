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
  if (!v.mechanism.empty()) j["mechanism"] = v.mechanism;
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
  j = nlohmann::json{{"what", u.what}, {"state", to_string(u.state)}, {"reason", u.reason}};
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
  if (r.explain) j["explain"] = *r.explain;
}

void to_json(nlohmann::json& j, const Explain& e) {
  nlohmann::json hyps = nlohmann::json::array();
  for (const auto& h : e.hypotheses)
    hyps.push_back({{"rule", h.rule}, {"cause", h.cause}, {"ratio", h.ratio}, {"evidence_key", h.evidence_key},
                    {"culprit", h.culprit}, {"why", h.why}, {"known_cause", h.known_cause}, {"counted", h.counted}});
  nlohmann::json causes = nlohmann::json::array();
  for (const auto& c : e.causes) {
    nlohmann::json factors = nlohmann::json::array();
    for (const auto& f : c.factors)
      factors.push_back({{"evidence_key", f.evidence_key}, {"ratio", f.ratio}, {"rule", f.rule}, {"why", f.why}});
    causes.push_back({{"cause", c.cause}, {"prior", c.prior}, {"prior_odds", c.prior_odds}, {"factors", factors},
                      {"odds", c.odds}, {"confidence", c.confidence}, {"candidate", c.candidate}});
  }
  j = nlohmann::json{{"hypotheses", hyps},         {"causes", causes},
                     {"total_odds", e.total_odds}, {"unchecked", e.unchecked},
                     {"unchecked_factor", e.unchecked_factor}, {"unknown_causes", e.unknown_causes}};
}

}  // namespace ccdiag
