// Process groups named by the parallel dimension they serve (docs/fr.md
// "Parallel dimensions"): a verdict reads "the tp dimension (DeviceMesh
// mesh_tp) group 4" rather than "process group 4". Pure.
//
// Recognised descriptions (pg_desc in flight-recorder dumps, group_desc of
// new_group, the description torch keeps on the group):
//   DeviceMesh:  "mesh_<dim>" for a mesh with dim names, "mesh_dim_<i>" without
//   Megatron-core / NeMo: TENSOR_MODEL_PARALLEL_GROUP -> tp, PIPELINE_MODEL_... -> pp,
//     DATA_PARALLEL_GROUP[_WITH_CP] -> dp, CONTEXT_PARALLEL_GROUP -> cp,
//     EXPERT_MODEL_PARALLEL_GROUP -> ep, EXPERT_TENSOR_PARALLEL_GROUP -> etp,
//     EXPERT_DATA_PARALLEL_GROUP -> edp
//   "default_pg": the world group.
#pragma once

#include <string>
#include <string_view>

namespace ccdiag {

struct ParallelDim {
  std::string dim;     // "tp", "dp", "world"; "" when the description names none
  std::string source;  // "DeviceMesh", "Megatron", "default group"
};

ParallelDim parallel_dim(std::string_view desc);

// "process group 4 (tp dimension, DeviceMesh mesh_tp)", "process group 0 (world,
// default_pg)", "process group 7 (desc)" or "process group 7".
std::string group_label(std::string_view name, std::string_view desc);

}  // namespace ccdiag
