#include "analysis/cross_rank/fr_ops.hpp"

#include <charconv>

namespace ccdiag::fr {

namespace {

int int_at(std::string_view s) {
  int v = -1;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

}  // namespace

std::string_view to_string(OpFamily f) {
  switch (f) {
    case OpFamily::all_reduce: return "all_reduce";
    case OpFamily::all_gather: return "all_gather";
    case OpFamily::reduce_scatter: return "reduce_scatter";
    case OpFamily::all_to_all: return "all_to_all";
    case OpFamily::broadcast: return "broadcast";
    case OpFamily::reduce: return "reduce";
    case OpFamily::gather: return "gather";
    case OpFamily::scatter: return "scatter";
    case OpFamily::coalesced_end: return "coalesced";
    case OpFamily::send: return "send";
    case OpFamily::recv: return "recv";
    case OpFamily::other: return "other";
  }
  return "other";
}

OpInfo parse_profiling_name(std::string_view name) {
  OpInfo o;
  const auto colon = name.find(':');
  std::string_view rest = name;
  if (colon != std::string_view::npos) {
    o.backend = name.substr(0, colon);
    rest = name.substr(colon + 1);
  }
  // "send 1->0" / "recv 0<-1": op, then the peers (group-local ranks).
  const auto sp = rest.find(' ');
  std::string_view op = sp == std::string_view::npos ? rest : rest.substr(0, sp);
  o.op = op;
  if (op == "send" || op == "recv") {
    o.family = op == "send" ? OpFamily::send : OpFamily::recv;
    if (sp != std::string_view::npos) {
      std::string_view peers = rest.substr(sp + 1);
      if (auto a = peers.find("->"); a != std::string_view::npos) {
        o.peer_src = int_at(peers.substr(0, a));
        o.peer_dst = int_at(peers.substr(a + 2));
      } else if (auto b = peers.find("<-"); b != std::string_view::npos) {
        o.peer_dst = int_at(peers.substr(0, b));
        o.peer_src = int_at(peers.substr(b + 2));
      }
    }
    return o;
  }
  if (op == "coalesced" || op == "ALLGATHER_coalesced" || op == "REDUCE_SCATTER_coalesced")
    o.family = OpFamily::coalesced_end;
  else if (op == "all_reduce" || op == "allreduce_coalesced" || op == "all_reduce_barrier" || op == "barrier")
    o.family = OpFamily::all_reduce;
  else if (op == "all_gather" || op == "_all_gather_base" || op == "all_gather_base" ||
           op == "all_gather_into_tensor_coalesced")
    o.family = OpFamily::all_gather;
  else if (op == "reduce_scatter" || op == "_reduce_scatter_base" || op == "reduce_scatter_tensor_coalesced")
    o.family = OpFamily::reduce_scatter;
  else if (op == "all_to_all" || op == "all_to_all_single" || op == "alltoall" || op == "alltoall_base")
    o.family = OpFamily::all_to_all;
  else if (op == "broadcast" || op == "_broadcast_oop")
    o.family = OpFamily::broadcast;
  else if (op == "reduce" || op == "_reduce_oop")
    o.family = OpFamily::reduce;
  else if (op == "gather")
    o.family = OpFamily::gather;
  else if (op == "scatter")
    o.family = OpFamily::scatter;
  return o;
}

}  // namespace ccdiag::fr
