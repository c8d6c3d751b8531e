// The `gpu` collector for `ccdiag collect` / live `diagnose`: the NVML probe
// (nvml_probe.hpp) on the live host. With --root (a captured or fixture tree)
// NVML is not consulted, since it describes the live host, not the tree; that is
// recorded as unchecked. Never runs the active P2P test (collect is passive).
#pragma once

#include "collectors/collector.hpp"

namespace ccdiag {

CollectorOutput collect_gpu(const CollectContext& ctx);

}  // namespace ccdiag
