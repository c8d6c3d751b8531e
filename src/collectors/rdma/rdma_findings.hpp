// RDMA / netdev evidence -> findings (pure; no I/O). Reads rdma.port,
// rdma.counters, net.netdev and rdma.qp evidence and returns (docs/probe.md
// lists ids, thresholds and weights):
//   rdma.port_down              state not ACTIVE or phys_state not LinkUp       -> nic_port_down
//   rdma.port_no_subnet_manager IB INIT + LinkUp (SM never configured the port) -> nic_port_down
//   rdma.port_flapping          phys_state LinkErrorRecovery (retraining now)   -> nic_link_flapping
//   rdma.port_rate_degraded     rate below the host's majority                  (context)
//   rdma.counters_rising        link_downed / link_error_recovery / carrier or signal / transport errors
//                               growing during the sample window                -> nic_link_flapping,
//                                                                                  ib_transport_retry_exceeded, qp_error_state
//   rdma.congestion             CNP/ECN/xmit_wait rates                         (context)
//   net.netdev_down             operstate not up on an RDMA netdev              -> nic_port_down
//   rdma.qp_error               QPs in ERR or SQE, per owning process           -> qp_error_state
#pragma once

#include <vector>

#include "ccdiag/evidence.hpp"
#include "ccdiag/finding.hpp"

namespace ccdiag {

std::vector<Finding> rdma_findings(const std::vector<Evidence>& evidence);

}  // namespace ccdiag
