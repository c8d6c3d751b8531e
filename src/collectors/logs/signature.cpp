#include "collectors/logs/signature.hpp"

#include <fstream>
#include <sstream>

#include <re2/re2.h>

namespace ccdiag::logs {

nlohmann::json to_json(const Signature& s) {
  nlohmann::json sup = nlohmann::json::array();
  for (const auto& c : s.supports) sup.push_back({{"cause", c.cause}, {"weight", c.weight}});
  nlohmann::json j{{"id", s.id},
                   {"layer", std::string(to_string(s.layer))},
                   {"severity", std::string(to_string(s.severity))},
                   {"role", std::string(to_string(s.role))},
                   {"pattern", s.pattern},
                   {"summary", s.summary},
                   {"supports", sup},
                   {"meaning", s.meaning}};
  if (s.fallback) j["fallback"] = true;
  if (s.reporter_waits) j["reporter_waits"] = true;
  if (!s.extractor.empty()) j["extractor"] = s.extractor;
  return j;
}

Status validate_pattern(const std::string& pattern) {
  RE2::Options o;
  o.set_log_errors(false);
  RE2 re(pattern, o);
  if (!re.ok()) return make_error("bad pattern: " + re.error());
  return Ok{};
}

Result<Signature> signature_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return make_error("a signature must be a JSON object");
  auto str = [&j](const char* key, bool required, std::string& out) -> Status {
    if (!j.contains(key)) {
      if (required) return make_error(std::string("missing \"") + key + "\"");
      return Ok{};
    }
    if (!j[key].is_string()) return make_error(std::string("\"") + key + "\" must be a string");
    out = j[key].get<std::string>();
    return Ok{};
  };
  Signature s;
  std::string layer = "nccl", severity = "error", role = "primary";
  for (auto st : {str("id", true, s.id), str("pattern", true, s.pattern), str("summary", false, s.summary),
                  str("meaning", false, s.meaning), str("layer", false, layer), str("severity", false, severity),
                  str("role", false, role)})
    if (!st) return st.error();
  if (s.id.empty()) return make_error("\"id\" is empty");
  auto l = parse_layer(layer);
  if (!l) return make_error("signature " + s.id + ": unknown layer \"" + layer + "\"");
  auto sev = parse_severity(severity);
  if (!sev) return make_error("signature " + s.id + ": unknown severity \"" + severity + "\"");
  auto r = parse_finding_role(role);
  if (!r) return make_error("signature " + s.id + ": unknown role \"" + role + "\"");
  s.layer = *l;
  s.severity = *sev;
  s.role = *r;
  if (s.summary.empty()) s.summary = s.id;
  if (j.contains("fallback")) {
    if (!j["fallback"].is_boolean()) return make_error("signature " + s.id + ": \"fallback\" must be true or false");
    s.fallback = j["fallback"].get<bool>();
  }
  if (j.contains("reporter_waits")) {
    if (!j["reporter_waits"].is_boolean())
      return make_error("signature " + s.id + ": \"reporter_waits\" must be true or false");
    s.reporter_waits = j["reporter_waits"].get<bool>();
  }
  if (j.contains("supports")) {
    const auto& sup = j["supports"];
    if (!sup.is_array()) return make_error("signature " + s.id + ": \"supports\" must be an array");
    for (const auto& c : sup) {
      if (!c.is_object() || !c.contains("cause") || !c["cause"].is_string() || !c.contains("weight") ||
          !c["weight"].is_number() || c["weight"].get<double>() <= 0)
        return make_error("signature " + s.id + ": each support needs \"cause\" (string) and \"weight\" (> 0)");
      s.supports.push_back(CauseSupport{c["cause"].get<std::string>(), c["weight"].get<double>()});
    }
  }
  if (auto v = validate_pattern(s.pattern); !v) return make_error("signature " + s.id + ": " + v.error().message);
  return s;
}

Result<std::vector<Signature>> load_signature_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot open signature file", path, "check the path given to --signatures");
  std::ostringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return make_error("not valid JSON", path, "see docs/logs.md for the signature file format");
  const nlohmann::json* arr = &j;
  if (j.is_object() && j.contains("signatures")) arr = &j["signatures"];
  if (!arr->is_array())
    return make_error("expected a JSON array of signatures (or {\"signatures\": [...]})", path);
  std::vector<Signature> out;
  for (const auto& e : *arr) {
    auto s = signature_from_json(e);
    if (!s) return make_error(s.error().message, path);
    out.push_back(std::move(*s));
  }
  return out;
}

}  // namespace ccdiag::logs
