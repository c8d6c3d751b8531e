#include "collectors/nccl/attach/comm_decode.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace ccdiag::nccl::attach {

namespace {

template <class T>
std::optional<T> rd(const DecodeContext& ctx, uint64_t addr) {
  T v{};
  if (addr == 0 || !ctx.target->memory->read_exact(addr, &v, sizeof v)) return std::nullopt;
  return v;
}

// addr + layout offset of `key`, or nullopt when the layout lacks the key.
std::optional<uint64_t> at(const DecodeContext& ctx, uint64_t base, const char* key) {
  auto o = ctx.layout->get(key);
  if (!o || base == 0) return std::nullopt;
  return base + static_cast<uint64_t>(*o);
}

template <class T>
std::optional<T> field(const DecodeContext& ctx, uint64_t base, const char* key) {
  auto a = at(ctx, base, key);
  if (!a) return std::nullopt;
  return rd<T>(ctx, *a);
}

int64_t konst(const DecodeContext& ctx, const char* key, int64_t def) { return ctx.layout->get(key).value_or(def); }

std::string pattern_name(const DecodeContext& ctx, int p) {
  if (p == konst(ctx, "const.ncclPatternSend", -100)) return "Send";
  if (p == konst(ctx, "const.ncclPatternRecv", -100)) return "Recv";
  static const char* common[] = {"Ring", "RingTwice", "PipelineFrom", "PipelineTo", "TreeUp", "TreeDown", "TreeUpDown"};
  if (p >= 0 && p < 7) return common[p];
  return fmt::format("pattern {}", p);
}

void decode_channels(const DecodeContext& ctx, CommState& c) {
  const int64_t max_ch = konst(ctx, "const.MAXCHANNELS", 64);
  auto ch0 = at(ctx, c.addr, "ncclComm.channels");
  auto ch_size = ctx.layout->get("ncclChannel.sizeof");
  if (!ch0 || !ch_size || c.n_channels <= 0) return;
  if (c.n_channels > max_ch) {
    c.notes.push_back(fmt::format("nChannels {} exceeds MAXCHANNELS {}: channels not decoded", c.n_channels, max_ch));
    return;
  }
  const auto peer_send = ctx.layout->get("ncclChannelPeer.send").value_or(0);
  const auto peer_recv = ctx.layout->get("ncclChannelPeer.recv");
  const auto conn_size = ctx.layout->get("ncclConnector.sizeof");
  const auto connected = ctx.layout->get("ncclConnector.connected");
  const size_t npeers = static_cast<size_t>(std::min<int64_t>(c.nranks, static_cast<int64_t>(ctx.max_peers)));
  for (int i = 0; i < c.n_channels; ++i) {
    const uint64_t ch = *ch0 + static_cast<uint64_t>(i) * static_cast<uint64_t>(*ch_size);
    ChannelState cs;
    cs.index = i;
    cs.id = field<int32_t>(ctx, ch, "ncclChannel.id").value_or(-1);
    auto peers = field<uint64_t>(ctx, ch, "ncclChannel.peers");
    if (peers && *peers && peer_recv && conn_size && connected) {
      std::vector<uint64_t> ptrs(npeers);
      if (ctx.target->memory->read_exact(*peers, ptrs.data(), npeers * 8)) {
        for (size_t r = 0; r < npeers; ++r) {
          if (!ptrs[r]) continue;
          ChannelPeerConn pc;
          pc.peer = static_cast<int>(r);
          for (int k = 0; k < 2; ++k) {
            auto s = rd<int32_t>(ctx, ptrs[r] + peer_send + k * *conn_size + *connected);
            auto v = rd<int32_t>(ctx, ptrs[r] + *peer_recv + k * *conn_size + *connected);
            pc.send = pc.send || (s && *s == 1);
            pc.recv = pc.recv || (v && *v == 1);
          }
          if (pc.send || pc.recv) cs.peers.push_back(pc);
        }
      } else {
        c.notes.push_back(fmt::format("channel {}: peer array unreadable", i));
      }
    }
    c.channels.push_back(std::move(cs));
  }
}

ProxyOp decode_op(const DecodeContext& ctx, uint64_t addr) {
  ProxyOp op;
  op.addr = addr;
  op.op_count = field<uint64_t>(ctx, addr, "ncclProxyArgs.opCount").value_or(0);
  op.p2p = (op.op_count & 1) != 0;
  op.index = op.op_count >> 1;
  op.nsubs = field<int32_t>(ctx, addr, "ncclProxyArgs.nsubs").value_or(0);
  op.done = field<int32_t>(ctx, addr, "ncclProxyArgs.done").value_or(0);
  op.state = field<int32_t>(ctx, addr, "ncclProxyArgs.state").value_or(0);
  if (auto p = field<uint8_t>(ctx, addr, "ncclProxyArgs.pattern")) {
    op.pattern = *p;
    op.pattern_name = pattern_name(ctx, *p);
  }
  const int64_t max_subs = konst(ctx, "const.NCCL_PROXY_MAX_SUBS", 64);
  const int64_t steps = konst(ctx, "const.NCCL_STEPS", 8);
  const auto sub_size = ctx.layout->get("ncclProxySubArgs.sizeof");
  const uint64_t subs0 = addr + static_cast<uint64_t>(ctx.layout->get("ncclProxyArgs.subs").value_or(0));
  if (!sub_size || op.nsubs <= 0 || op.nsubs > max_subs) return op;
  for (int i = 0; i < op.nsubs; ++i) {
    const uint64_t sa = subs0 + static_cast<uint64_t>(i) * static_cast<uint64_t>(*sub_size);
    ProxySub s;
    s.channel = field<int32_t>(ctx, sa, "ncclProxySubArgs.channelId").value_or(-1);
    s.nsteps = field<int32_t>(ctx, sa, "ncclProxySubArgs.nsteps").value_or(0);
    s.peer = field<int32_t>(ctx, sa, "ncclProxySubArgs.peer").value_or(-1);
    s.base = field<uint64_t>(ctx, sa, "ncclProxySubArgs.base").value_or(0);
    s.posted = field<uint64_t>(ctx, sa, "ncclProxySubArgs.posted").value_or(0);
    s.received = field<uint64_t>(ctx, sa, "ncclProxySubArgs.received").value_or(0);
    s.flushed = field<uint64_t>(ctx, sa, "ncclProxySubArgs.flushed").value_or(0);
    s.transmitted = field<uint64_t>(ctx, sa, "ncclProxySubArgs.transmitted").value_or(0);
    s.done = field<uint64_t>(ctx, sa, "ncclProxySubArgs.done").value_or(0);
    // Direction: the connection's `send` flag; Send/Recv patterns as fallback.
    if (auto conn = field<uint64_t>(ctx, sa, "ncclProxySubArgs.connection"); conn && *conn) {
      if (auto send = field<int32_t>(ctx, *conn, "ncclProxyConnection.send")) s.direction = *send ? "send" : "recv";
    }
    if (s.direction.empty() && op.pattern_name == "Send") s.direction = "send";
    if (s.direction.empty() && op.pattern_name == "Recv") s.direction = "recv";
    classify(s, static_cast<int>(steps));
    op.subs.push_back(s);
  }
  return op;
}

void decode_proxy(const DecodeContext& ctx, CommState& c) {
  auto ps = field<uint64_t>(ctx, c.addr, "ncclComm.proxyState");
  if (!ps || !*ps) return;
  c.proxy_present = true;
  if (auto tp = field<int32_t>(ctx, *ps, "ncclProxyState.tpRank")) c.proxy_tp_rank = *tp;
  auto pps = at(ctx, *ps, "ncclProxyState.progressState");
  if (!pps) return;
  if (auto th = field<uint64_t>(ctx, *pps, "ncclProxyProgressState.thread"); th && *th) {
    bool any_fs = false, found = false;
    for (const auto& t : ctx.target->threads) {
      if (!t.fs_base) continue;
      any_fs = true;
      found = found || *t.fs_base == *th;
    }
    if (any_fs) c.proxy_thread_found = found;
  }
  auto active = field<uint64_t>(ctx, *pps, "ncclProxyProgressState.active");
  if (!active) {
    c.notes.push_back("proxy progress state unreadable");
    return;
  }
  // Walk exactly as NCCL's dumpProxyState: `next`, and for each element its `nextPeer` chain.
  std::set<uint64_t> seen;
  uint64_t op = *active;
  while (op) {
    if (!seen.insert(op).second) {
      c.notes.push_back("proxy op list loops (read while it changed)");
      break;
    }
    if (c.proxy_ops.size() >= ctx.max_proxy_ops) {
      c.proxy_ops_truncated = true;
      break;
    }
    auto probe = field<uint64_t>(ctx, op, "ncclProxyArgs.opCount");
    if (!probe) {
      c.notes.push_back(fmt::format("proxy op at 0x{:x} unreadable (freed?)", op));
      break;
    }
    c.proxy_ops.push_back(decode_op(ctx, op));
    uint64_t peer = field<uint64_t>(ctx, op, "ncclProxyArgs.nextPeer").value_or(0);
    while (peer && seen.insert(peer).second && c.proxy_ops.size() < ctx.max_proxy_ops) {
      if (!field<uint64_t>(ctx, peer, "ncclProxyArgs.opCount")) break;
      c.proxy_ops.push_back(decode_op(ctx, peer));
      peer = field<uint64_t>(ctx, peer, "ncclProxyArgs.nextPeer").value_or(0);
    }
    op = field<uint64_t>(ctx, op, "ncclProxyArgs.next").value_or(0);
  }
}

}  // namespace

void classify(ProxySub& s, int nccl_steps) {
  const uint64_t n = static_cast<uint64_t>(std::max(0, s.nsteps));
  const bool posting = s.posted < n && s.posted < s.done + static_cast<uint64_t>(nccl_steps);
  if (s.direction == "send") {
    s.sane = s.done <= s.transmitted && s.transmitted <= s.posted && s.posted <= n;
    if (posting) {
      s.state = 'I', s.waits_for = "posting";
    } else if (s.transmitted < s.posted) {
      s.state = 'G', s.waits_for = "gpu";
    } else if (s.done < s.transmitted) {
      s.state = 'S', s.waits_for = "network_send";
    } else {
      s.state = 'D', s.waits_for = "done";
    }
  } else {
    s.sane = s.done <= s.transmitted && s.transmitted <= s.received && s.received <= s.posted && s.posted <= n;
    if (posting) {
      s.state = 'I', s.waits_for = "posting";
    } else if (s.received < s.posted) {
      s.state = 'R', s.waits_for = "network";
    } else if (s.transmitted < s.received) {
      s.state = 'F', s.waits_for = "flush";
    } else if (s.done < s.transmitted) {
      s.state = 'G', s.waits_for = "gpu";
    } else {
      s.state = 'D', s.waits_for = "done";
    }
  }
}

std::string reject_reason(const DecodeContext& ctx, uint64_t addr) {
  auto rank = field<int32_t>(ctx, addr, "ncclComm.rank");
  auto nranks = field<int32_t>(ctx, addr, "ncclComm.nRanks");
  auto dev = field<int32_t>(ctx, addr, "ncclComm.cudaDev");
  if (!rank || !nranks) return "identity unreadable";
  if (*rank == -1 && *nranks == -1) return "poisoned (rank and nRanks -1: being freed)";
  if (*nranks < 1 || *nranks > (1 << 24)) return fmt::format("nRanks {} out of range", *nranks);
  if (*rank < 0 || *rank >= *nranks) return fmt::format("rank {} not in [0, {})", *rank, *nranks);
  if (dev && (*dev < -1 || *dev > 4096)) return fmt::format("cudaDev {} out of range", *dev);
  return "";
}

CommState decode_comm(const DecodeContext& ctx, uint64_t addr) {
  CommState c;
  c.addr = addr;
  c.comm_hash = field<uint64_t>(ctx, addr, "ncclComm.commHash").value_or(0);
  c.rank = field<int32_t>(ctx, addr, "ncclComm.rank").value_or(-1);
  c.nranks = field<int32_t>(ctx, addr, "ncclComm.nRanks").value_or(0);
  c.cuda_dev = field<int32_t>(ctx, addr, "ncclComm.cudaDev").value_or(-1);
  if (auto b = field<int64_t>(ctx, addr, "ncclComm.busId")) c.bus_id = bus_id_string(*b);
  c.init_state = field<int32_t>(ctx, addr, "ncclComm.initState").value_or(0);
  if (auto v = field<int32_t>(ctx, addr, "ncclComm.asyncResult")) c.async_result = *v;
  if (auto p = field<uint64_t>(ctx, addr, "ncclComm.abortFlag"); p && *p) c.abort_flag = rd<uint32_t>(ctx, *p);
  c.op_count = field<uint64_t>(ctx, addr, "ncclComm.opCount");
  c.coll_op_count = field<uint64_t>(ctx, addr, "ncclComm.collOpCount");
  auto shared = field<uint64_t>(ctx, addr, "ncclComm.sharedRes");
  if (!c.coll_op_count && shared && *shared)  // < 2.24.3: per shared resources
    c.coll_op_count = field<uint64_t>(ctx, *shared, "ncclSharedResources.collOpCount");
  if (shared && *shared)
    if (auto owner = field<uint64_t>(ctx, *shared, "ncclSharedResources.owner")) c.owner_ok = *owner == addr;
  if (auto seq = at(ctx, addr, "ncclComm.seqNumber")) {
    const int64_t nf = konst(ctx, "const.NCCL_NUM_FUNCTIONS", 5);
    for (int64_t f = 0; f < nf && f < 16; ++f) c.seq_numbers.push_back(rd<uint64_t>(ctx, *seq + f * 8).value_or(0));
  }
  c.n_channels = field<int32_t>(ctx, addr, "ncclComm.nChannels").value_or(0);
  if (ctx.ras_list) c.in_ras_list = ctx.ras_list->count(addr) != 0;
  decode_channels(ctx, c);
  decode_proxy(ctx, c);
  return c;
}

std::string comm_digest(const CommState& c) {
  std::string d = fmt::format("{:x}/{}/{}/{}/{}/{}/{}", c.comm_hash, c.rank, c.nranks, c.init_state,
                              c.coll_op_count.value_or(0), c.op_count.value_or(0), c.n_channels);
  for (auto s : c.seq_numbers) d += fmt::format(",{}", s);
  for (const auto& o : c.proxy_ops) {
    d += fmt::format("|{:x}:{}:{}", o.addr, o.op_count, o.nsubs);
    for (const auto& s : o.subs)
      d += fmt::format(";{}.{}.{}.{}.{}.{}", s.channel, s.peer, s.posted, s.received, s.transmitted, s.done);
  }
  return d;
}

CommState decode_comm_stable(const DecodeContext& ctx, uint64_t addr, int attempts) {
  CommState prev = decode_comm(ctx, addr);
  std::string prev_digest = comm_digest(prev);
  for (int i = 2; i <= std::max(2, attempts); ++i) {
    CommState cur = decode_comm(ctx, addr);
    std::string d = comm_digest(cur);
    cur.read_attempts = i;
    if (d == prev_digest) return cur;
    prev = std::move(cur);
    prev_digest = std::move(d);
  }
  prev.consistent = false;
  prev.notes.push_back("the comm kept changing during the read: counters may be torn");
  return prev;
}

void compare_samples(const CommState& earlier, CommState& later) {
  std::map<std::tuple<uint64_t, int, int, std::string>, const ProxySub*> before;
  for (const auto& o : earlier.proxy_ops)
    for (const auto& s : o.subs) before[{o.op_count, s.channel, s.peer, s.direction}] = &s;
  for (auto& o : later.proxy_ops)
    for (auto& s : o.subs) {
      auto it = before.find({o.op_count, s.channel, s.peer, s.direction});
      if (it == before.end()) {
        s.moving = true;
        continue;
      }
      const ProxySub& e = *it->second;
      s.moving = e.posted != s.posted || e.received != s.received || e.transmitted != s.transmitted || e.done != s.done;
    }
}

}  // namespace ccdiag::nccl::attach
