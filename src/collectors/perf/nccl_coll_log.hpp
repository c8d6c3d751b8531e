// Per-rank collective arrival times out of NCCL INFO logs (docs/perf.md
// "NCCL INFO logs"). Pure: log text in, records out.
//
// Lines read (formats from NCCL's own source):
//  * NCCL_DEBUG_SUBSYS=COLL, src/enqueue.cc (2.18 .. 2.30; read by logs::parse_nccl_coll_line), one per collective per rank:
//      "<Func>: opCount <hex> sendbuff <p> recvbuff <p> count <n> datatype <d> op <d> root <d> comm <p> [nranks=<n>] stream <p>"
//    opCount is the communicator's launch counter (comm->opCount, bumped once per
//    launch in proxy.cc), so the ops of one group share it: the n-th op of an
//    opCount on a rank matches the n-th on every other rank.
//  * the init line (src/init.cc), which maps the per-process comm pointer to the
//    communicator id all ranks share, and gives the rank, cudaDev and busId:
//      "comm <p> rank <r> nranks <n> cudaDev <d> nvmlDev <d> busId <hex> commId 0x<hex> - Init COMPLETE"
//    (before commId was printed, the k-th communicator of that size in each process stands for it).
//  * the timestamp of the line: NCCL's own (NCCL >= 2.26: NCCL_DEBUG_TIMESTAMP_LEVELS=INFO, format
//    NCCL_DEBUG_TIMESTAMP_FORMAT, default "[%F %T] ", "%6f" adds microseconds) or a prefix added
//    by the launcher or log collector (ISO-8601 as kubectl --timestamps, journald/syslog), read by
//    logs::parse_line_prefix. Only wall-clock timestamps are used.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/coll_timing.hpp"

namespace ccdiag::perf {

struct CollLogFile {
  std::string source;
  size_t coll_lines = 0;     // COLL lines of a communicator whose init line was read
  size_t timed = 0;          // of them with a wall-clock timestamp
  int frac_digits = -1;      // fewest sub-second digits among timed lines (-1: none timed)
};

struct CollLog {
  TimingSet timings;
  std::vector<CollLogFile> files;
  // Clock resolution of the coarsest timed line, in ms (1000 for whole seconds); 0 when none timed.
  double resolution_ms = 0;
};

// Reads one more log file into `log` (lines of many processes may be interleaved).
void read_coll_log(std::string_view text, const std::string& source, CollLog& log);

}  // namespace ccdiag::perf
