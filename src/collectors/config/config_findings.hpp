// Host-config evidence -> findings (pure; no I/O). Reads host.memlock,
// host.peermem and host.fabric_manager (docs/probe.md lists ids and weights):
//   host.memlock_low                 a rank's soft RLIMIT_MEMLOCK below 1 GiB   -> memlock_limit_too_low
//   host.peermem_missing             GPUs + RDMA NICs, no peermem, no DMA-BUF   -> gpudirect_rdma_module_missing
//   host.fabric_manager_not_running  NVSwitch system without nv-fabricmanager  -> fabric_manager_not_running
// None of these causes a mid-run hang by itself (they fail init or slow a job): weights
// are moderate so live link/QP/Xid evidence outranks them.
#pragma once

#include <vector>

#include "ccdiag/evidence.hpp"
#include "ccdiag/finding.hpp"

namespace ccdiag {

std::vector<Finding> config_findings(const std::vector<Evidence>& evidence);

}  // namespace ccdiag
