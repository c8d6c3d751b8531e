// Evidence: one typed observation from a collector, with where it came from
// and whether it could be observed at all (docs/architecture.md).
//
// "Checked and healthy" (availability ok, data says healthy) and "could not
// check" (availability unavailable/timeout/error) are different states; rules
// must not read the second as the first.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/subject.hpp"

namespace ccdiag {

enum class AvailabilityState { ok, unavailable, timeout, error };

struct Availability {
  AvailabilityState state = AvailabilityState::ok;
  std::string reason;  // empty when ok

  static Availability ok() { return {}; }
  static Availability unavailable(std::string why) { return {AvailabilityState::unavailable, std::move(why)}; }
  static Availability timeout(std::string why) { return {AvailabilityState::timeout, std::move(why)}; }
  static Availability error(std::string why) { return {AvailabilityState::error, std::move(why)}; }
  bool is_ok() const { return state == AvailabilityState::ok; }
};

std::string_view to_string(AvailabilityState s);

// Where an item came from: a file and line, an API call, a command.
struct Provenance {
  std::string source;              // "raw/nccl-rank5.log", "nvmlDeviceGetCount", "/proc/1234/status"
  std::optional<int64_t> line;     // 1-based line number in `source`, when it is a file
  std::string excerpt;             // the raw line or value, trimmed, secrets never included
};

struct Evidence {
  std::string kind;                // dotted, stable: "host.identity", "kernel.xid", "host.dev_shm"
  Subject subject;
  Provenance provenance;
  std::optional<std::string> time; // ISO-8601 UTC when known ("2026-04-22T21:34:20Z") or as logged
  Availability availability;
  nlohmann::json data = nlohmann::json::object();  // kind-specific payload, documented per kind
};

void to_json(nlohmann::json& j, const Provenance& p);
void from_json(const nlohmann::json& j, Provenance& p);
void to_json(nlohmann::json& j, const Availability& a);
void from_json(const nlohmann::json& j, Availability& a);
void to_json(nlohmann::json& j, const Evidence& e);
void from_json(const nlohmann::json& j, Evidence& e);

}  // namespace ccdiag
