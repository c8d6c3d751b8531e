#include "analysis/tree/rules/rules.hpp"

namespace ccdiag::rules {

bool is_causal_finding(const Finding& f) {
  if (f.role != FindingRole::primary || f.severity < Severity::warning) return false;
  for (const auto& s : f.supports)
    if (s.weight > 1.0) return true;
  return false;
}

std::optional<std::string> str_field(const nlohmann::json& data, const char* key) {
  if (!data.is_object()) return std::nullopt;
  const auto it = data.find(key);
  if (it == data.end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<int64_t>());
  if (it->is_number()) return it->dump();
  return std::nullopt;
}

std::optional<int64_t> int_field(const nlohmann::json& data, const char* key) {
  if (!data.is_object()) return std::nullopt;
  const auto it = data.find(key);
  if (it == data.end()) return std::nullopt;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number()) return static_cast<int64_t>(it->get<double>());
  return std::nullopt;
}

std::optional<bool> bool_field(const nlohmann::json& data, const char* key) {
  if (!data.is_object()) return std::nullopt;
  const auto it = data.find(key);
  if (it == data.end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

std::string host_name(const Subject& s) { return s.host.value_or("this host"); }

Finding derived_finding(std::string id, Layer layer, Severity sev, std::string summary, const Subject& subject,
                        const std::vector<const Evidence*>& from) {
  Finding f;
  f.id = std::move(id);
  f.layer = layer;
  f.severity = sev;
  f.role = FindingRole::primary;
  f.summary = std::move(summary);
  f.subject = subject;
  for (const auto* e : from) {
    f.provenance.push_back(e->provenance);
    if (f.provenance.size() >= 8) break;
  }
  return f;
}

}  // namespace ccdiag::rules
