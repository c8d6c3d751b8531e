#include "ccdiag/report.hpp"

#include <array>
#include <utility>

namespace ccdiag {

namespace {
constexpr std::array<std::pair<UncheckedState, const char*>, 5> kNames = {{
    {UncheckedState::skipped, "skipped"},
    {UncheckedState::unavailable, "unavailable"},
    {UncheckedState::timeout, "timeout"},
    {UncheckedState::error, "error"},
    {UncheckedState::unknown, "unknown"},
}};
}  // namespace

const char* to_string(UncheckedState s) {
  for (const auto& [st, name] : kNames)
    if (st == s) return name;
  return "unavailable";
}

std::optional<UncheckedState> unchecked_state_from(std::string_view name) {
  for (const auto& [st, n] : kNames)
    if (name == n) return st;
  return std::nullopt;
}

UncheckedState unchecked_state_of(AvailabilityState s) {
  switch (s) {
    case AvailabilityState::timeout: return UncheckedState::timeout;
    case AvailabilityState::error: return UncheckedState::error;
    case AvailabilityState::ok:  // an ok probe has nothing unchecked; callers pass the failing ones
    case AvailabilityState::unavailable: break;
  }
  return UncheckedState::unavailable;
}

Unchecked unchecked_from_text(std::string what, std::string_view text) {
  Unchecked u{std::move(what), UncheckedState::unavailable, std::string(text)};
  if (const size_t colon = text.find(": "); colon != std::string_view::npos)
    if (auto st = unchecked_state_from(text.substr(0, colon))) {
      u.state = *st;
      u.reason = std::string(text.substr(colon + 2));
    }
  return u;
}

}  // namespace ccdiag
