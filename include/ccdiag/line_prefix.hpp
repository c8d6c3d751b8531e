// One log line's prefixes, parsed (pure, total: any byte string is accepted).
//
// Handles, in any order at the start of a line: launcher tags ("[rank3]:",
// "[trainer0|0]:", "[worker2]:", srun -l "3: "), timestamps ("[2026-04-22
// 21:34:20] ", ISO-8601 "2026-04-22T21:34:20.123Z ", glog "[E1201
// 10:00:00.123 4242 ProcessGroupNCCL.cpp:1234] ", dmesg "[ 12.345678] ",
// syslog "Nov 30 05:00:00 host kernel: "; after an ISO time, kubelet's CRI
// "stderr F " and a journal/rsyslog file's "host proc[pid]: "), pdsh/clush
// host tags ("node017: "), then the NCCL prefix
// "host:pid:tid [dev] [file:line [(func)]] NCCL INFO|WARN|TRACE|CALL"
// (NCCL's src/debug.cc, ncclDebugLogV). ANSI colour is removed by strip_ansi() before.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ccdiag::logs {

// What kind of clock a timestamp is on; only equal kinds compare.
enum class TimeKind { none, wall, glog, uptime };

struct LinePrefix {
  std::optional<int> rank;          // launcher tag rank
  std::string_view timestamp;       // as logged (empty when none)
  TimeKind time_kind = TimeKind::none;
  double time_key = 0;              // seconds on that clock (wall: Unix time; glog: seconds in year)
  std::string_view host;            // NCCL prefix host ("" when no NCCL prefix)
  std::optional<int64_t> pid, tid;
  std::optional<int> dev;           // NCCL [cudaDev]
  std::string_view level;           // INFO, WARN, TRACE, CALL ("" when none)
  std::string_view body;            // the line after launcher tags and timestamps (NCCL prefix kept)
};

// `line` must outlive the views in the result. No trailing newline expected.
LinePrefix parse_line_prefix(std::string_view line);

// Removes ANSI escape sequences (CSI "ESC [ ... final", OSC, two-byte) in place.
void strip_ansi(std::string& s);

// Rank from a file name such as "rank5.log", "rank_05.txt.gz", "worker-3.log"; nullopt otherwise.
std::optional<int> rank_from_filename(std::string_view name);

}  // namespace ccdiag::logs
