// One NCCL_DEBUG_SUBSYS=COLL line, the line NCCL prints for every collective
// and point-to-point call it enqueues (src/enqueue.cc, 2.7 .. 2.30):
//   "<Func>: opCount <hex> sendbuff <p> recvbuff <p> count <n> datatype <d> op <d> root <d> comm <p> [nranks=<n>] stream <p> ..."
// A COLL-subsystem log is nearly all such lines (one per call per rank), so the
// line is read by hand, not by a regex with captures (about 7 us a line). The
// perf timing reader and the decision tree's log facts both use this one parser.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ccdiag::logs {

struct NcclCollLine {
  std::string_view func;  // "AllReduce", "Send", ...: a view into the parsed text
  std::string_view comm;  // the per-process communicator pointer, "0x..."
  int64_t op_count = 0;   // comm->opCount: the ops of one group launch share it
  int64_t count = 0, datatype = 0, redop = 0, root = 0;
  int64_t nranks = 0;     // 0 when the line has no "[nranks=<n>]"
};

// Parses the call out of `text` (the whole line or the message after "NCCL INFO ");
// nullopt when `text` holds no well-formed COLL call.
std::optional<NcclCollLine> parse_nccl_coll_line(std::string_view text);
// The same, where the caller has found ": opCount " at `at` already (a COLL
// log is millions of lines: the search is not made twice).
std::optional<NcclCollLine> parse_nccl_coll_line(std::string_view text, size_t at);

}  // namespace ccdiag::logs
