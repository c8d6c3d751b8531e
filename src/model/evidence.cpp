#include "ccdiag/evidence.hpp"

namespace ccdiag {

std::string_view to_string(AvailabilityState s) {
  switch (s) {
    case AvailabilityState::ok: return "ok";
    case AvailabilityState::unavailable: return "unavailable";
    case AvailabilityState::timeout: return "timeout";
    case AvailabilityState::error: return "error";
  }
  return "error";
}

void to_json(nlohmann::json& j, const Provenance& p) {
  j = nlohmann::json{{"source", p.source}};
  if (p.line) j["line"] = *p.line;
  if (!p.excerpt.empty()) j["excerpt"] = p.excerpt;
}

void from_json(const nlohmann::json& j, Provenance& p) {
  p = Provenance{};
  if (!j.is_object()) return;
  p.source = j.value("source", "");
  if (j.contains("line") && j["line"].is_number_integer()) p.line = j["line"].get<int64_t>();
  p.excerpt = j.value("excerpt", "");
}

void to_json(nlohmann::json& j, const Availability& a) {
  j = nlohmann::json{{"state", std::string(to_string(a.state))}};
  if (!a.reason.empty()) j["reason"] = a.reason;
}

void from_json(const nlohmann::json& j, Availability& a) {
  a = Availability{};
  if (!j.is_object()) return;
  const std::string s = j.value("state", "ok");
  if (s == "unavailable") a.state = AvailabilityState::unavailable;
  else if (s == "timeout") a.state = AvailabilityState::timeout;
  else if (s == "error") a.state = AvailabilityState::error;
  a.reason = j.value("reason", "");
}

void to_json(nlohmann::json& j, const Evidence& e) {
  j = nlohmann::json{{"kind", e.kind}, {"subject", e.subject}, {"provenance", e.provenance},
                     {"availability", e.availability}, {"data", e.data}};
  if (e.time) j["time"] = *e.time;
}

void from_json(const nlohmann::json& j, Evidence& e) {
  e = Evidence{};
  e.kind = j.at("kind").get<std::string>();
  if (j.contains("subject")) e.subject = j["subject"].get<Subject>();
  if (j.contains("provenance")) e.provenance = j["provenance"].get<Provenance>();
  if (j.contains("availability")) e.availability = j["availability"].get<Availability>();
  if (j.contains("data")) e.data = j["data"];
  if (j.contains("time") && j["time"].is_string()) e.time = j["time"].get<std::string>();
}

}  // namespace ccdiag
