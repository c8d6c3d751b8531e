// The systemd journal's kernel messages as JSON export lines
// (`journalctl -k -o json --no-pager -b [--since @EPOCH]`), for hosts where
// /dev/kmsg is not readable (containers, dmesg_restrict) or the ring buffer
// rolled over. journalctl is run with a deadline and killed at it; its
// output is kept up to `max_bytes` (the newest lines). Each line is one JSON
// object (MESSAGE, __REALTIME_TIMESTAMP, ...), which parse_kernel_log reads.
// Failure modes: journalctl missing or failing -> Error with its exit status.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "ccdiag/result.hpp"

namespace ccdiag {

Result<std::string> read_journal_kernel(std::optional<int64_t> since_epoch_s, std::chrono::milliseconds deadline,
                                        size_t max_bytes);

}  // namespace ccdiag
