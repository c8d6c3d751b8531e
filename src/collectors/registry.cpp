#include "collectors/collector.hpp"
#include "collectors/config/config_collector.hpp"
#include "collectors/gpu/gpu_collector.hpp"
#include "collectors/host/host_collectors.hpp"
#include "collectors/host/firewall.hpp"
#include "collectors/host/host_services.hpp"
#include "collectors/kernel/kernel_log_collector.hpp"
#include "collectors/nccl/attach/attach_evidence.hpp"
#include "collectors/nccl/nccl_artifacts.hpp"
#include "collectors/proc/ranks_collector.hpp"
#include "collectors/pcie/pcie_collector.hpp"
#include "collectors/rdma/rdma_collector.hpp"

namespace ccdiag {

using std::chrono::milliseconds;

const std::vector<CollectorInfo>& all_collectors() {
  static const std::vector<CollectorInfo> collectors = {
      {"host", milliseconds(2000), collect_host_identity, "host.identity"},
      {"versions", milliseconds(3000), collect_versions, "host.versions"},
      {"dev_shm", milliseconds(2000), collect_dev_shm, "host.dev_shm"},
      {"kernel_log", milliseconds(5000), [](const CollectContext& c) { return collect_kernel_log(c); }, "kernel.source"},
      {"nccl", milliseconds(4000), nccl::collect_nccl, "nccl.ras"},
      {"ranks", milliseconds(3000), collect_ranks, "ranks.process"},
      {"nccl_attach", milliseconds(6000), nccl::attach::collect_nccl_attach, "nccl.attach"},
      {"stacks", milliseconds(5000), collect_rank_stacks, "stacks.process", /*follows_timeout=*/true},
      {"pcie", milliseconds(4000), collect_pcie, "pcie.link"},
      {"rdma", milliseconds(5000), [](const CollectContext& c) { return collect_rdma(c); }, "rdma.port"},
      {"host_config", milliseconds(3000), collect_host_config, "host.memlock"},
      {"logind", milliseconds(1000), collect_logind, "host.logind"},
      {"resolve", milliseconds(3000), collect_resolve, "host.resolve"},
      {"net", milliseconds(2000), collect_net_links, "net.link"},
      {"firewall", milliseconds(2000), collect_firewall, "host.firewall"},
      {"gpu", milliseconds(9000), collect_gpu, "gpu.nvml"},
  };
  return collectors;
}

}  // namespace ccdiag
