#include "collectors/collector.hpp"
#include "collectors/config/config_collector.hpp"
#include "collectors/host/host_collectors.hpp"
#include "collectors/kernel/kernel_log_collector.hpp"
#include "collectors/pcie/pcie_collector.hpp"
#include "collectors/rdma/rdma_collector.hpp"

namespace ccdiag {

using std::chrono::milliseconds;

const std::vector<CollectorInfo>& all_collectors() {
  static const std::vector<CollectorInfo> collectors = {
      {"host", milliseconds(2000), collect_host_identity},
      {"versions", milliseconds(3000), collect_versions},
      {"dev_shm", milliseconds(2000), collect_dev_shm},
      {"kernel_log", milliseconds(5000), [](const CollectContext& c) { return collect_kernel_log(c); }},
      {"pcie", milliseconds(4000), collect_pcie},
      {"rdma", milliseconds(5000), [](const CollectContext& c) { return collect_rdma(c); }},
      {"host_config", milliseconds(3000), collect_host_config},
  };
  return collectors;
}

}  // namespace ccdiag
