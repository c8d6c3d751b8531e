// Where a stuck rank is, and what that points to: one vocabulary for every
// source that can see inside NCCL (the ccdiag profiler plugin's flight
// recorder, `nccl attach` on a stock NCCL), so the decision tree weighs the
// same state the same way whichever source saw it.
//
//   not_enqueued / peer_missing  host side: the rank never issued the op      framework
//   proxy_stalled                the proxy thread stopped                      nccl
//   kernel_not_started           op enqueued, kernel never ran                 nccl
//   init_hang                    ncclCommInit* never completed                 framework (bootstrap)
//   async_error                  the comm holds an asynchronous NCCL error     nccl
//   gpu_wait / flush_wait        the rank's GPU / GPUDirect flush              hardware
//   network_wait                 a send posted, never completed by the NIC     transport
#pragma once

#include <string>
#include <vector>

#include "ccdiag/finding.hpp"
#include "ccdiag/layer.hpp"

namespace ccdiag::nccl {

// Layer of a terminal state; Layer::nccl for unknown ones.
Layer stuck_state_layer(const std::string& where);
// The root causes a culprit in that state supports (likelihood ratios).
std::vector<CauseSupport> stuck_state_supports(const std::string& where);

}  // namespace ccdiag::nccl
