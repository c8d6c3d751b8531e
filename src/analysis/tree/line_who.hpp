// Who wrote a log line, from its prefixes: NCCL's "host:pid:tid [dev] "
// (possibly after "[time] " or a launcher's tag), PyTorch's "[rank3]:" /
// "[Rank 3]", torchrun's "[role<local>|<rank>]:".
//
// Read by hand, not by regular expression: every line of a NCCL debug log
// goes through here, and RE2 on each was a quarter of `diagnose --log` on a
// COLL-subsystem log. The answers are those of the expressions in the
// comments (tests/unit/tree_line_who.cpp holds both to the same answers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ccdiag {

struct LineWho {
  std::string host;
  std::optional<int64_t> pid;
  std::optional<std::string> dev;  // CUDA device ordinal in "[3]"
  std::optional<int> rank;
};

// NCCL's prefix: the leftmost match of  ([^\s:\[\]]+):(\d+):(\d+) \[(\d+)\]
// followed by a space, in `head`.
struct NcclPrefix {
  size_t start = 0;  // where the host begins
  std::string_view host, pid, tid, dev;
};
std::optional<NcclPrefix> find_nccl_prefix(std::string_view head);

// The leftmost  \[(?:rank|Rank )(\d+)\]  in `head`: where it starts and the digits.
std::optional<std::pair<size_t, std::string_view>> find_rank_tag(std::string_view head);

// The line's writer: the NCCL prefix if it starts in the first 64 bytes, the
// torchrun role tag at the line's start, else a rank tag in the first 64.
// Only the first 160 bytes are read, so a long line costs no more.
LineWho who_of(std::string_view line);

// The process who_of(line) names, as "host:pid" (":" where it names none),
// written into `out`: the part of who_of a per-line key needs, without the
// rank tag or an allocation.
void process_key_of(std::string_view line, std::string& out);

}  // namespace ccdiag
