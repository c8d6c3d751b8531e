// NVML probe: everything ccdiag reads from NVML, as Evidence (kinds and data
// fields documented in docs/probe-gpu.md):
//   gpu.nvml     one per host: library found?, init result, driver/CUDA version, device list
//   gpu.device   one per GPU: identity, lost/reset state, ECC, remapped rows, retired pages,
//                clocks-event reasons, temperature, compute processes, fabric state, recovery action
//   nvlink.link  one per NVLink the GPU reports: state, remote PCI address and type,
//                replay/recovery/CRC counters sampled twice `sample_interval` apart
//   gpu.p2p      one per host (source "nvml"): P2P status matrix (read, write, nvlink, atomics)
//                and topology common-ancestor levels
//
// Every NVML call runs in a forked child under a deadline (sys/probe_runner.hpp):
// a GPU in a bad state (Xid 79, 119) can make NVML block for minutes, and a hang
// diagnoser must not hang. Stages: (1) load + init + enumerate, (2) one child
// per GPU in parallel, so one wedged GPU costs only its own data, (3) the P2P
// matrix. A child records the call it is in on a shared page, so a timeout says
// which call did not return ("nvmlInitWithFlags did not return within 3000 ms").
//
// Failure modes (never an exception): library absent -> gpu.nvml `unavailable`
// and an Unchecked "NVML" entry; init failed -> `error` (DRIVER_NOT_LOADED:
// `unavailable`); hang -> `timeout`; a GPU answering GPU_IS_LOST -> gpu.device
// ok with data.lost = true (a finding, not a failure to check).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "ccdiag/evidence.hpp"
#include "ccdiag/report.hpp"

namespace ccdiag {

struct NvmlProbeOptions {
  std::string library = "libnvidia-ml.so.1";          // soname searched on the library path, or a path
  std::string host;                                    // subject.host of every item
  std::chrono::milliseconds total{8000};               // the whole probe ends within this
  std::chrono::milliseconds init_deadline{3000};       // stage 1
  std::chrono::milliseconds device_deadline{3000};     // stage 2, per GPU, plus sample_interval
  std::chrono::milliseconds sample_interval{1000};     // between the two NVLink counter samples; 0 = one sample
  bool p2p_matrix = true;                              // stage 3
};

struct NvmlProbeResult {
  std::vector<Evidence> evidence;
  std::vector<Unchecked> unchecked;
};

NvmlProbeResult probe_nvml(const NvmlProbeOptions& opts);

}  // namespace ccdiag
