// NCCL's channel set-up line, the most frequent line of an NCCL_DEBUG=INFO
// log (one per channel, peer and direction at every communicator's init):
//   "... NCCL INFO Channel 00/32 : 0[0] -> 1[1] via P2P/IPC/read"
//   "... NCCL INFO Channel 03/0 : 2[2] -> 10[2] [send] via NET/IB/1/GDRDMA"
// read by hand in its common form. The log facts' regex defines the fact; this
// reader answers only where it is sure to give what the regex gives (the
// transport a single word ending the line) and otherwise says nothing, so the
// caller falls back to the regex. Why: the regex's submatch search cost more
// than all the other checks of such a line together.
#pragma once

#include <optional>
#include <string_view>

namespace ccdiag {

struct ChannelEdgeLine {
  int from_rank = 0, from_dev = 0, to_rank = 0, to_dev = 0;
  std::string_view direction;  // "send", "receive", or empty
  std::string_view transport;  // "P2P/IPC/read", "NET/IB/1/GDRDMA", ...
};

std::optional<ChannelEdgeLine> read_channel_edge_line(std::string_view line);

}  // namespace ccdiag
