// Kernel log -> findings (pure). Accepts what users hand us: a /dev/kmsg dump
// ("<prio>,<seq>,<usec>,<flags>;text" records), dmesg output ("[  12.3] text"),
// syslog/kern.log lines, or journalctl -k -o json lines (MESSAGE field).
#pragma once

#include <string>
#include <string_view>

#include "ccdiag/evidence_set.hpp"

namespace ccdiag {

struct KernelLogParse {
  EvidenceSet set;        // kernel.log (summary evidence) + findings (Xid, fell off bus)
  size_t lines = 0;
  size_t skipped = 0;     // lines that could not be decoded (bad JSON record...)
};

// `source` names the file for provenance; `host` is the host it came from (may be empty).
KernelLogParse parse_kernel_log(std::string_view text, const std::string& source, const std::string& host);

// The message part of one line in any of the accepted formats (kmsg record
// header, dmesg timestamp, journal JSON) — the line itself when none applies.
std::string kernel_line_message(std::string_view line, bool* bad = nullptr);

}  // namespace ccdiag
