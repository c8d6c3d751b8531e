#include "collectors/gpu/gpu_collector.hpp"

#include "collectors/gpu/nvml_probe.hpp"

namespace ccdiag {

CollectorOutput collect_gpu(const CollectContext& ctx) {
  CollectorOutput out;
  Evidence nv;
  nv.kind = "gpu.nvml";
  nv.subject.host = ctx.host;
  if (!ctx.root.is_live()) {
    nv.provenance.source = "collector gpu";
    nv.availability = Availability::unavailable("not probed: --root reads a tree, NVML would describe the live host");
    out.unchecked.push_back(Unchecked{"NVML", UncheckedState::skipped, "--root given (NVML describes the live host, not the tree)"});
    out.evidence.push_back(std::move(nv));
    return out;
  }
  NvmlProbeOptions opts;
  opts.host = ctx.host;
  // Inside the collector's own 9 s budget: 3 s init, 3 s + 1 s sampling per GPU
  // (GPUs in parallel), the rest for the P2P matrix.
  opts.total = std::chrono::milliseconds(8500);
  NvmlProbeResult r = probe_nvml(opts);
  out.evidence = std::move(r.evidence);
  out.unchecked = std::move(r.unchecked);
  return out;
}

}  // namespace ccdiag
