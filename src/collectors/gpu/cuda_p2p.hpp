// Active P2P test through the CUDA driver API (libcuda.so.1, dlopen'ed at run
// time; no CUDA toolkit at build time): the cuDeviceCanAccessPeer matrix, then
// for every GPU pair a small copy each way (bandwidth, latency) in its own
// forked child with a per-pair deadline. A copy that never completes is the
// signature of peer writes eaten by the IOMMU or ACS (case 012: NCCL hangs at
// the first collective while the driver reports peer access as available).
// With one GPU, a device-local copy stands in as a smoke test.
//
// The result is one `gpu.p2p` Evidence with data.source = "cuda" (fields in
// docs/probe-gpu.md); judging it is pure (gpu_findings.hpp). Nothing here
// touches a GPU in the calling process: CUDA does not survive fork(), so every
// CUDA call is made in a child.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ccdiag/evidence.hpp"
#include "ccdiag/report.hpp"

namespace ccdiag {

struct P2pTestOptions {
  std::string library = "libcuda.so.1";
  std::string host;
  size_t bytes = 32u << 20;                       // per timed copy
  int iterations = 5;                              // timed copies per direction
  std::chrono::milliseconds init_deadline{10000};  // cuInit + matrix (init is slow without persistence mode)
  std::chrono::milliseconds pair_deadline{5000};   // per pair, both directions
  std::chrono::milliseconds total{120000};         // the whole test
  // Expected path per unordered pair of BDFs ("nvlink" or "pcie"), from NVML's
  // P2P status; pairs not listed are "unknown".
  std::map<std::pair<std::string, std::string>, std::string> expected_path;
};

struct P2pTestResult {
  Evidence evidence;               // kind gpu.p2p, data.source "cuda"
  std::vector<Unchecked> unchecked;
};

P2pTestResult run_p2p_test(const P2pTestOptions& opts);

}  // namespace ccdiag
