#include "collectors/nccl/stuck_state.hpp"

namespace ccdiag::nccl {

Layer stuck_state_layer(const std::string& w) {
  if (w == "not_enqueued" || w == "peer_missing" || w == "init_hang") return Layer::framework;
  if (w == "gpu_wait" || w == "flush_wait") return Layer::hardware;
  if (w == "network_wait") return Layer::transport;
  return Layer::nccl;
}

std::vector<CauseSupport> stuck_state_supports(const std::string& w) {
  if (w == "not_enqueued" || w == "peer_missing")
    return {{"rank_skips_collective", 10.0}, {"rank_stuck_in_host_code", 8.0},
            {"straggler_or_timeout_too_short", 2.0}, {"mismatched_collectives", 2.0}};
  if (w == "init_hang")
    return {{"rank_process_died", 6.0}, {"rank_stuck_in_host_code", 6.0}, {"bootstrap_unreachable", 6.0},
            {"socket_connection_failure", 3.0}, {"wrong_network_interface", 3.0}, {"firewall_blocked_ports", 3.0}};
  if (w == "proxy_stalled") return {{"nccl_bug", 10.0}, {"rank_stuck_in_host_code", 5.0}};
  if (w == "kernel_not_started") return {{"cuda_graph_or_stream_misuse", 15.0}, {"gpu_hung_kernel", 5.0}};
  if (w == "async_error") return {{"nccl_bug", 3.0}, {"nic_pair_unreachable", 3.0}, {"gpu_hung_kernel", 2.0}};
  if (w == "gpu_wait")
    return {{"gpu_hung_kernel", 20.0}, {"gpu_xid_nvlink_fault", 3.0}, {"gpu_ecc_or_memory_fault", 3.0}};
  if (w == "flush_wait") return {{"gpudirect_rdma_module_missing", 6.0}, {"pcie_link_degraded", 6.0}};
  if (w == "network_wait")
    return {{"nic_pair_unreachable", 25.0}, {"ib_transport_retry_exceeded", 6.0}, {"qp_error_state", 6.0},
            {"nic_port_down", 4.0}};
  return {};
}

}  // namespace ccdiag::nccl
