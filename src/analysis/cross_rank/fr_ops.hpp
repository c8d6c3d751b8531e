// Profiling names of flight-recorder entries ("nccl:all_reduce",
// "nccl:send 1->0", "ncclx:recv 0<-1", "nccl:ALLGATHER_coalesced") decoded
// into what matching needs (as PyTorch's fr_trace does in
// torch/distributed/flight_recorder/components/types.py).
#pragma once

#include <string>
#include <string_view>

namespace ccdiag::fr {

enum class OpFamily {
  all_reduce,      // all_reduce, allreduce_coalesced, all_reduce_barrier: input == output
  all_gather,      // output numel = input numel x group size
  reduce_scatter,  // input numel = output numel x group size
  all_to_all,      // sizes legitimately differ per rank: compared by totals
  broadcast,
  reduce,
  gather,          // non-root outputs are [[]]
  scatter,         // non-root inputs are [[]]
  coalesced_end,   // coalesced / ALLGATHER_coalesced / REDUCE_SCATTER_coalesced: closes a group
  send,
  recv,
  other
};

struct OpInfo {
  std::string_view backend;  // "nccl", "ncclx", "gloo", "xccl", ...
  std::string_view op;       // "all_reduce", "send", ...
  OpFamily family = OpFamily::other;
  int peer_src = -1;         // send/recv: group-local ranks
  int peer_dst = -1;
};

OpInfo parse_profiling_name(std::string_view name);
std::string_view to_string(OpFamily f);

}  // namespace ccdiag::fr
