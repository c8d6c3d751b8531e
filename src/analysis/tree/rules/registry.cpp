#include "analysis/tree/rules/rules.hpp"

namespace ccdiag {

const std::vector<RuleInfo>& all_rules() {
  static const std::vector<RuleInfo> rules = {
      {"finding_support", "primary findings vote for the causes they name", rules::finding_support},
      {"skew_audit", "cross-host / cross-rank skew of versions, NCCL_* env, net plugin, MTU, GID index, link rates",
       rules::skew_audit},
      {"dev_shm_size", "a small /dev/shm supports container_shm_too_small", rules::dev_shm_size},
      {"watchdog_without_error", "a watchdog timeout with no error anywhere: ranks diverged",
       rules::watchdog_without_error},
      {"watchdog_disagreement", "ranks' watchdog timeouts at one sequence number name different ops or sizes",
       rules::watchdog_disagreement},
      {"coll_disagreement", "ranks' NCCL COLL lines at one opCount of a communicator name different calls",
       rules::coll_disagreement},
      {"fingerprint_odd_rank", "the rank every DETAIL fingerprint mismatch names issued the odd collective",
       rules::fingerprint_odd_rank},
      {"store_key_never_set", "ranks gave up waiting for one rank's gloo address key: it never reached init",
       rules::store_key_never_set},
      {"store_clients_missing", "the store host's 'J/E clients joined' and the logs of E - 1 ranks: the absent rank",
       rules::store_clients_missing},
      {"store_target_local", "a store client failed to reach 127.0.0.1/localhost: nothing listened, no network cause",
       rules::store_target_local},
      {"socket_ifname", "NCCL_SOCKET_IFNAME that matched nothing; bootstrap on a host-local bridge", rules::socket_ifname},
      {"cross_host_p2p", "P2P/SHM edges between ranks on different hosts: host identity collision",
       rules::cross_host_p2p},
      {"one_name_two_addresses", "processes under one host name advertise two addresses on one interface",
       rules::one_name_two_addresses},
      {"net_without_gdr", "network channels without /GDRDMA: GPUDirect RDMA not in use", rules::net_without_gdr},
      {"p2p_silent_hang", "silent hang after init on P2P GPUs: IOMMU / ACS", rules::p2p_silent_hang},
      {"selected_hca", "the one HCA NCCL selected is the one verbs calls fail on", rules::selected_hca},
      {"rdma_state", "RDMA port state, link_downed growth, QPs in error", rules::rdma_state},
      {"pcie_state", "PCIe link degradation, NVLink state, IOMMU and ACS", rules::pcie_state},
      {"host_config", "memlock, peer-memory, fabric manager, RemoveIPC, firewall, name resolution, host identity",
       rules::host_config},
      {"rank_census", "process state and stack census: the odd rank out", rules::rank_census},
      {"flight_recorder", "flight-recorder findings without explicit supports", rules::flight_recorder},
  };
  return rules;
}

}  // namespace ccdiag
