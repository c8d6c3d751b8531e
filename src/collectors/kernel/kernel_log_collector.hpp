#pragma once

#include <optional>

#include "collectors/collector.hpp"

namespace ccdiag {

struct KernelLogOptions {
  std::optional<int64_t> since_epoch_s;  // --since: keep records at or after this time
};

// Sources, first that works: the --kernel-log file; live: /dev/kmsg, then the
// journal (`journalctl -k -o json -b`); with --root: <root>/dev/kmsg,
// <root>/var/log/kern.log, <root>/var/log/dmesg. Boot time for since-boot
// stamps comes from /proc/stat btime (through SysRoot).
// The text is kept whole (newest 8 MiB) as raw/kernel.log; findings are
// derived from it by parse_kernel_log (collectors/kernel/kernel_log.hpp).
CollectorOutput collect_kernel_log(const CollectContext& ctx);
CollectorOutput collect_kernel_log(const CollectContext& ctx, const KernelLogOptions& opts);

}  // namespace ccdiag
