#include "ccdiag/finding.hpp"

namespace ccdiag {

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::info: return "info";
    case Severity::warning: return "warning";
    case Severity::error: return "error";
    case Severity::critical: return "critical";
  }
  return "info";
}

std::optional<Severity> parse_severity(std::string_view t) {
  if (t == "info") return Severity::info;
  if (t == "warning") return Severity::warning;
  if (t == "error") return Severity::error;
  if (t == "critical") return Severity::critical;
  return std::nullopt;
}

std::string_view to_string(FindingRole r) {
  switch (r) {
    case FindingRole::primary: return "primary";
    case FindingRole::cascade: return "cascade";
    case FindingRole::symptom: return "symptom";
    case FindingRole::context: return "context";
  }
  return "primary";
}

std::optional<FindingRole> parse_finding_role(std::string_view t) {
  if (t == "primary") return FindingRole::primary;
  if (t == "cascade") return FindingRole::cascade;
  if (t == "symptom") return FindingRole::symptom;
  if (t == "context") return FindingRole::context;
  return std::nullopt;
}

Finding finding_from(const Evidence& e, std::string id, Layer layer, Severity severity, std::string summary) {
  Finding f;
  f.id = std::move(id);
  f.layer = layer;
  f.severity = severity;
  f.role = FindingRole::primary;
  f.summary = std::move(summary);
  f.subject = e.subject;
  f.provenance.push_back(e.provenance);
  f.time = e.time;
  return f;
}

void to_json(nlohmann::json& j, const Finding& f) {
  j = nlohmann::json{{"id", f.id},
                     {"kind", f.id},
                     {"layer", std::string(to_string(f.layer))},
                     {"severity", std::string(to_string(f.severity))},
                     {"role", std::string(to_string(f.role))},
                     {"summary", f.summary},
                     {"subject", f.subject},
                     {"provenance", f.provenance},
                     {"fields", f.fields}};
  if (f.time) j["time"] = *f.time;
  if (f.order) j["order"] = *f.order;
  if (f.caused_by) j["caused_by"] = *f.caused_by;
  if (!f.supports.empty()) {
    auto& arr = j["supports"] = nlohmann::json::array();
    for (const auto& s : f.supports) arr.push_back({{"cause", s.cause}, {"weight", s.weight}});
  }
}

void from_json(const nlohmann::json& j, Finding& f) {
  f = Finding{};
  f.id = j.at("id").get<std::string>();
  if (auto l = parse_layer(j.value("layer", "framework"))) f.layer = *l;
  if (auto s = parse_severity(j.value("severity", "info"))) f.severity = *s;
  if (auto r = parse_finding_role(j.value("role", "primary"))) f.role = *r;
  f.summary = j.value("summary", "");
  if (j.contains("subject")) f.subject = j["subject"].get<Subject>();
  if (j.contains("provenance") && j["provenance"].is_array())
    f.provenance = j["provenance"].get<std::vector<Provenance>>();
  if (j.contains("fields") && j["fields"].is_object()) f.fields = j["fields"];
  if (j.contains("time") && j["time"].is_string()) f.time = j["time"].get<std::string>();
  if (j.contains("order") && j["order"].is_number_integer()) f.order = j["order"].get<int64_t>();
  if (j.contains("caused_by") && j["caused_by"].is_string()) f.caused_by = j["caused_by"].get<std::string>();
  if (j.contains("supports") && j["supports"].is_array()) {
    for (const auto& s : j["supports"]) {
      if (!s.is_object() || !s.contains("cause") || !s["cause"].is_string()) continue;
      const double w = s.contains("weight") && s["weight"].is_number() ? s["weight"].get<double>() : 1.0;
      f.supports.push_back(CauseSupport{s["cause"].get<std::string>(), w});
    }
  }
}

}  // namespace ccdiag
