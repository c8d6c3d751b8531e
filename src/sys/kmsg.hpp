// Reading /dev/kmsg without blocking (the kernel's Documentation/ABI/testing/dev-kmsg): one
// record per read() into a buffer that holds a whole record, O_NONBLOCK so the
// end of the buffer is EAGAIN instead of a wait, EPIPE (records overwritten
// while reading) counted and skipped.
#pragma once

#include <string>

#include "ccdiag/result.hpp"

namespace ccdiag {

struct KmsgDump {
  std::string records;   // "<prio>,<seq>,<usec>,<flags>;text\n" per record, continuation lines dropped
  size_t count = 0;
  size_t lost = 0;       // EPIPE events
};

// Reads every record currently in the ring buffer from `path` (normally
// /dev/kmsg). At most `max_bytes` are kept (the newest ones).
Result<KmsgDump> read_kmsg(const std::string& path, size_t max_bytes);

}  // namespace ccdiag
