// PCIe / IOMMU evidence -> findings (pure; no I/O). Reads pcie.link, pcie.aer,
// pcie.acs and host.iommu evidence (collect_pcie, or a bundle) and returns the
// findings with their catalogue support (docs/probe.md lists ids and weights):
//   pcie.link_downtrained   lost lanes anywhere, lost speed on a NIC/switch link -> pcie_link_degraded
//   pcie.link_down          "Unknown" speed / width 0 on a path                  -> pcie_link_degraded, gpu_fell_off_bus
//   pcie.gpu_config_lost    GPU config space reads all-ones                      -> gpu_fell_off_bus
//   pcie.aer_fatal / pcie.aer_nonfatal / pcie.aer_correctable                     -> pcie_link_degraded (+ gpu_fell_off_bus)
//   pcie.acs_redirect       ReqRedir/CmpltRedir on a bridge of a GPU↔NIC/GPU path -> pcie_acs_p2p_blocked
//   host.iommu_translated   GPU/NIC in translated DMA domains                    -> iommu_blocks_p2p
#pragma once

#include <vector>

#include "ccdiag/evidence.hpp"
#include "ccdiag/finding.hpp"

namespace ccdiag {

std::vector<Finding> pcie_findings(const std::vector<Evidence>& evidence);

}  // namespace ccdiag
