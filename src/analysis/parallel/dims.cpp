#include "analysis/parallel/dims.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace ccdiag {

namespace {

bool plausible_dim(std::string_view d) {
  if (d.empty() || d.size() > 32) return false;
  return std::all_of(d.begin(), d.end(), [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-'; });
}

}  // namespace

ParallelDim parallel_dim(std::string_view desc) {
  if (desc == "default_pg") return {"world", "default group"};
  if (desc.starts_with("mesh_")) {
    std::string_view d = desc.substr(5);
    if (d == "default") return {"world", "DeviceMesh"};
    if (plausible_dim(d)) return {std::string(d), "DeviceMesh"};
  }
  // Megatron-core's group descriptions (parallel_state.py create_group).
  struct Known {
    std::string_view prefix, dim;
  };
  static constexpr Known kMegatron[] = {
      {"TENSOR_MODEL_PARALLEL", "tp"},   {"PIPELINE_MODEL_PARALLEL", "pp"}, {"EXPERT_TENSOR_PARALLEL", "etp"},
      {"EXPERT_MODEL_PARALLEL", "ep"},   {"EXPERT_DATA_PARALLEL", "edp"},   {"CONTEXT_PARALLEL", "cp"},
      {"DATA_PARALLEL", "dp"},           {"TENSOR_AND_DATA_PARALLEL", "tp-dp"},
  };
  for (const auto& k : kMegatron)
    if (desc.starts_with(k.prefix)) return {std::string(k.dim), "Megatron"};
  return {};
}

std::string group_label(std::string_view name, std::string_view desc) {
  const std::string base = fmt::format("process group {}", name.empty() ? std::string_view("?") : name);
  if (desc.empty() || desc == "undefined") return base;
  const ParallelDim p = parallel_dim(desc);
  if (p.dim == "world") return fmt::format("{} (world, {})", base, desc);
  if (!p.dim.empty()) return fmt::format("{} ({} dimension, {} {})", base, p.dim, p.source, desc);
  return fmt::format("{} ({})", base, desc);
}

}  // namespace ccdiag
