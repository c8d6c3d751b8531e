// The --since time window over a kernel log (pure). Records carry their time
// in different ways: a /dev/kmsg record in microseconds since boot, dmesg
// "[sec.usec]" likewise, a journal JSON export line in __REALTIME_TIMESTAMP
// (µs since the epoch). Lines whose time cannot be known (syslog lines with no
// year, continuation lines) are kept: dropping a possible Xid is worse than
// showing an old one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ccdiag {

// "--since" values: "90s", "10m", "2h", "1d" (before now), "@1767225600"
// (epoch seconds), "2026-11-30T05:00:00Z" / "2026-11-30 05:00:00" (UTC).
// Returns epoch seconds; nullopt when malformed.
std::optional<int64_t> parse_since(std::string_view text, int64_t now_epoch_s);

// Boot time in epoch seconds from /proc/stat ("btime 1767225600").
std::optional<int64_t> boot_time_from_proc_stat(std::string_view stat);

struct WindowedLog {
  std::string text;
  size_t kept = 0, dropped = 0, untimed = 0;
};
// Keeps the lines at or after `since_epoch_s`. `boot_epoch_s` converts
// since-boot stamps; without it those lines count as untimed and are kept.
WindowedLog filter_kernel_log_since(std::string_view text, int64_t since_epoch_s, std::optional<int64_t> boot_epoch_s);

}  // namespace ccdiag
