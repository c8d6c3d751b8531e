#include "collectors/collector.hpp"
#include "collectors/host/host_collectors.hpp"
#include "collectors/kernel/kernel_log_collector.hpp"
#include "collectors/nccl/nccl_artifacts.hpp"

namespace ccdiag {

using std::chrono::milliseconds;

const std::vector<CollectorInfo>& all_collectors() {
  static const std::vector<CollectorInfo> collectors = {
      {"host", milliseconds(2000), collect_host_identity, "host.identity"},
      {"versions", milliseconds(3000), collect_versions, "host.versions"},
      {"dev_shm", milliseconds(2000), collect_dev_shm, "host.dev_shm"},
      {"kernel_log", milliseconds(5000), collect_kernel_log, "kernel.source"},
      {"nccl", milliseconds(4000), nccl::collect_nccl, "nccl.ras"},
  };
  return collectors;
}

}  // namespace ccdiag
