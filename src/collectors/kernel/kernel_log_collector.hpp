#pragma once

#include "collectors/collector.hpp"

namespace ccdiag {

// Host paths read: /dev/kmsg (live), or <root>/dev/kmsg, <root>/var/log/kern.log,
// <root>/var/log/dmesg with --root, or the --kernel-log file.
CollectorOutput collect_kernel_log(const CollectContext& ctx);

}  // namespace ccdiag
