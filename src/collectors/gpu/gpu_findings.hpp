// GPU evidence -> findings (pure: no I/O, deterministic, total on any JSON,
// since bundles are user input). Reads the kinds the NVML probe and the CUDA
// P2P test record (gpu.nvml, gpu.device, nvlink.link, gpu.p2p; fields in
// docs/probe-gpu.md) and names the catalogue causes each finding supports.
//
// Thresholds (DCGM's health watches, NVIDIA/DCGM modules/health/DcgmHealthWatch.cpp):
//   NVLink replay or recovery counter rising between the two samples -> error;
//   CRC rising at >= 100/s -> error, slower -> warning;
//   a GPU with fewer active NVLinks than its peers on the same host -> error;
//   volatile uncorrectable ECC > 0, row-remap failure, >= 512 uncorrectable
//   remapped rows, >= 15 DBE / >= 63 retired pages -> error; pending remap or
//   retirement -> warning;
//   clocks-event bits 0x8/0x20/0x40/0x80 -> a slow rank (warning);
//   P2P copy that never completes -> critical; NVLink-expected pair below
//   kMinNvlinkGbps, or below half the median of its peers -> error.
#pragma once

#include <vector>

#include "ccdiag/evidence.hpp"
#include "ccdiag/finding.hpp"

namespace ccdiag {

inline constexpr double kCrcErrorRatePerS = 100.0;
inline constexpr double kMinNvlinkGbps = 40.0;   // below this an NVLink pair runs at PCIe speed
inline constexpr double kMinPcieGbps = 3.0;      // below this even a PCIe Gen3 x16 pair is broken

std::vector<Finding> gpu_findings(const std::vector<Evidence>& evidence);

}  // namespace ccdiag
