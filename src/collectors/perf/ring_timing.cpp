#include "collectors/perf/ring_timing.hpp"

namespace ccdiag::perf {

void add_ring_timings(const nccl::FrSnapshot& s, TimingSet& out) {
  RankProcess proc{s.host, s.pid, std::nullopt, ""};
  const std::string comm = nccl::comm_hex(s.comm_hash);
  for (const auto& op : s.ops) {
    if (op.kind != "coll" || op.start_ns == 0) continue;
    CollTiming c;
    c.proc = proc;
    c.comm = comm;
    c.comm_name = s.comm_name;
    c.comm_rank = s.rank;
    c.nranks = s.nranks;
    c.func = op.func;
    c.seq = op.seq;
    c.count = op.count;
    c.dtype = op.dtype;
    c.arrive_ns = static_cast<int64_t>(op.start_ns);
    if (op.state == "done" && op.done_ns >= op.start_ns) c.done_ns = static_cast<int64_t>(op.done_ns);
    c.source = s.source;
    out.colls.push_back(std::move(c));
  }
  for (const auto& ch : s.channels) {
    // A torn slot is not trusted; a PXN op (another process's) has no parent op here.
    if (ch.torn || !ch.op_seq || ch.op_stop_ns == 0 || ch.op_stop_ns < ch.op_start_ns || (ch.pid != 0 && ch.pid != s.pid)) continue;
    // seq counts per function: the parent op's function keeps AllReduce 5 and AllGather 5 apart.
    int func = 7;
    for (size_t i = 0; i < s.ops.size(); ++i)
      if (s.op_gen_of(i) == ch.op_gen) func = s.ops[i].func_index;
    ChannelTiming t;
    t.proc = proc;
    t.comm = comm;
    t.comm_rank = s.rank;
    t.nranks = s.nranks;
    t.channel = ch.channel;
    t.send = ch.is_send;
    t.peer = ch.peer;
    t.op_seq = (*ch.op_seq << 3) | static_cast<uint64_t>(func & 7);
    t.start_ns = static_cast<int64_t>(ch.op_start_ns);
    t.stop_ns = static_cast<int64_t>(ch.op_stop_ns);
    t.bytes = ch.trans_size;
    t.source = s.source;
    out.channels.push_back(std::move(t));
  }
}

}  // namespace ccdiag::perf
