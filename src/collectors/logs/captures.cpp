#include "collectors/logs/captures.hpp"

#include <algorithm>
#include <array>
#include <charconv>

namespace ccdiag::logs {

bool keep_as_string(std::string_view name) {
  static constexpr std::array<std::string_view, 23> k{
      "busid", "comm_id", "version", "version_a", "version_b", "value",          "cpumask",        "host",
      "host_hash", "bus", "bus_a",   "bus_b",     "peer",      "pci",            "nic",            "cuda",
      "local_version", "remote_version", "ring_ranks", "ranks", "from_dev",       "to_dev",         "driver"};
  return std::find(k.begin(), k.end(), name) != k.end();
}

namespace {
std::optional<int64_t> parse_int(bool as_string, std::string_view v) {
  if (as_string || v.empty() || v.size() > 18) return std::nullopt;
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return n;
}
}  // namespace

nlohmann::json typed_value(bool as_string, std::string_view v) {
  if (auto n = parse_int(as_string, v)) return *n;
  return std::string(v);
}

void Captures::clear() {
  entries_.clear();
  if (!owned_.empty()) owned_.clear();
}

void Captures::add(const CaptureName* name, std::string_view value) {
  entries_.push_back(Entry{name->name, name->as_string, value, std::nullopt});
}

void Captures::add_owned(std::string name, bool as_string, std::string value) {
  const std::string& n = owned_.emplace_back(std::move(name));
  const std::string& v = owned_.emplace_back(std::move(value));
  entries_.push_back(Entry{n, as_string, v, std::nullopt});
}

void Captures::add_owned(std::string name, int64_t value) {
  const std::string& n = owned_.emplace_back(std::move(name));
  const std::string& v = owned_.emplace_back(std::to_string(value));
  entries_.push_back(Entry{n, false, v, value});
}

const Captures::Entry* Captures::find(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

std::optional<int64_t> Captures::as_integer(const Entry& e) {
  return e.number ? e.number : parse_int(e.as_string, e.value);
}

std::optional<int64_t> Captures::integer(std::string_view name) const {
  const Entry* e = find(name);
  return e ? as_integer(*e) : std::nullopt;
}

std::optional<std::string_view> Captures::string(std::string_view name) const {
  const Entry* e = find(name);
  if (!e || as_integer(*e)) return std::nullopt;
  return e->value;
}

std::string Captures::text(std::string_view name) const {
  const Entry* e = find(name);
  if (!e) return {};
  if (auto n = as_integer(*e)) return std::to_string(*n);
  return std::string(e->value);
}

void Captures::append_text(std::string& out, std::string_view name) const {
  const Entry* e = find(name);
  if (!e) return;
  if (auto n = as_integer(*e)) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, *n);
    out.append(buf, r.ptr);
  } else {
    out.append(e->value);
  }
}

nlohmann::json Captures::value(std::string_view name) const {
  const Entry* e = find(name);
  if (!e) return nlohmann::json();
  if (e->number) return *e->number;
  return typed_value(e->as_string, e->value);
}

nlohmann::json Captures::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& e : entries_)
    j[std::string(e.name)] = e.number ? nlohmann::json(*e.number) : typed_value(e.as_string, e.value);
  return j;
}

}  // namespace ccdiag::logs
