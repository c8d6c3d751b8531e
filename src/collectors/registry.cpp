#include "collectors/collector.hpp"
#include "collectors/host/host_collectors.hpp"
#include "collectors/kernel/kernel_log_collector.hpp"
#include "collectors/proc/ranks_collector.hpp"

namespace ccdiag {

using std::chrono::milliseconds;

const std::vector<CollectorInfo>& all_collectors() {
  static const std::vector<CollectorInfo> collectors = {
      {"host", milliseconds(2000), collect_host_identity},
      {"versions", milliseconds(3000), collect_versions},
      {"dev_shm", milliseconds(2000), collect_dev_shm},
      {"kernel_log", milliseconds(5000), collect_kernel_log},
      {"ranks", milliseconds(3000), collect_ranks},
      {"stacks", milliseconds(5000), collect_rank_stacks},
  };
  return collectors;
}

}  // namespace ccdiag
