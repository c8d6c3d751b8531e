// The flight-recorder dump model (ccdiag/fr_dump.hpp): state names, the
// per-rank interning tables, backend semantics.
#include "ccdiag/fr_dump.hpp"

#include <functional>

namespace ccdiag::fr {

std::string_view to_string(FrState s) {
  switch (s) {
    case FrState::scheduled: return "scheduled";
    case FrState::started: return "started";
    case FrState::completed: return "completed";
    case FrState::unknown: return "unknown";
  }
  return "unknown";
}

uint32_t RankDump::intern_string(std::string_view s) {
  auto it = string_index_.find(std::string(s));
  if (it != string_index_.end()) return it->second;
  const auto id = static_cast<uint32_t>(strings.size());
  strings.emplace_back(s);
  string_index_.emplace(std::string(s), id);
  return id;
}

uint32_t RankDump::intern_shape(ShapeInfo s) {
  auto it = shape_index_.find(s.hash);
  if (it != shape_index_.end()) return it->second;
  const auto id = static_cast<uint32_t>(shapes.size());
  shape_index_.emplace(s.hash, id);
  shapes.push_back(std::move(s));
  return id;
}

uint32_t RankDump::intern_stack(std::string s) {
  auto it = stack_index_.find(s);
  if (it != stack_index_.end()) return it->second;
  const auto id = static_cast<uint32_t>(stacks.size());
  stack_index_.emplace(s, id);
  stacks.push_back(std::move(s));
  return id;
}

uint32_t RankDump::intern_pg(std::string_view name, std::string_view desc) {
  std::string key = std::string(name) + '\0' + std::string(desc);
  auto it = pg_index_.find(key);
  if (it != pg_index_.end()) return it->second;
  const auto id = static_cast<uint32_t>(pgs.size());
  pgs.push_back(PgRef{std::string(name), std::string(desc)});
  pg_index_.emplace(std::move(key), id);
  return id;
}

const std::string& RankDump::str(uint32_t i) const {
  static const std::string empty;
  return i < strings.size() ? strings[i] : empty;
}

const ShapeInfo& RankDump::shape(uint32_t i) const {
  static const ShapeInfo empty;
  return i < shapes.size() ? shapes[i] : empty;
}

bool device_backend(std::string_view backend) {
  return backend == "nccl" || backend == "xccl" || backend == "hccl" || backend == "rccl";
}

}  // namespace ccdiag::fr
