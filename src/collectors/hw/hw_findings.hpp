// The evidence -> findings step for the hardware-path probes (pure; no I/O),
// run on each bundle at ingest (pipeline/ingest_bundle.cpp) and by `ccdiag probe`:
//   1. pcie_findings + rdma_findings + config_findings over the set's evidence;
//   2. every finding whose subject names a GPU by PCI address (Xid lines,
//      PCIe findings) gets the GPU's index (fields.gpu_index, from pcie.link)
//      and the rank using that GPU (subject.rank, from ranks.process evidence,
//      or host.memlock's LOCAL_RANK when ranks bind GPU = LOCAL_RANK).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "ccdiag/evidence_set.hpp"

namespace ccdiag {

void add_hardware_findings(EvidenceSet& set);

// "0000:3b:00" (Xid), "00000000:3B:00.0" (NVML), "0000:3b:00.0" (sysfs) -> "0000:3b:00.0".
std::optional<std::string> normalize_bdf(std::string_view text);

struct GpuRef {
  std::optional<int> index;   // NVML / PCI-bus order
  std::optional<int> rank;
  std::string rank_source;    // "ranks.process" | "local_rank"
};
// host -> BDF -> what is known about that GPU.
std::map<std::string, std::map<std::string, GpuRef>> gpu_map(const EvidenceSet& set);

}  // namespace ccdiag
