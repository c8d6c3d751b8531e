// What `ccdiag nccl attach` read out of one process or core: the NCCL image,
// the layout used, and per communicator its identity, counters, channels and
// the proxy thread's active ops. Plain data; to_json/from_json are the
// evidence payload (kind "nccl.attach", docs/nccl-attach.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccdiag::nccl::attach {

// One ncclProxySubArgs: a (channel, peer) connection's step counters.
struct ProxySub {
  int channel = -1, peer = -1, nsteps = 0;
  std::string direction;  // "send" | "recv" | "" (connection unreadable)
  uint64_t base = 0, posted = 0, received = 0, flushed = 0, transmitted = 0, done = 0;
  char state = '?';       // NCCL's own letters: I R F G S D
  std::string waits_for;  // "posting" | "network" | "flush" | "gpu" | "network_send" | "done"
  std::optional<bool> moving;  // counters changed between two samples
  bool sane = true;       // done <= transmitted <= posted <= nsteps (send) / done <= received (recv)
};

struct ProxyOp {
  uint64_t addr = 0;
  uint64_t op_count = 0;  // (index << 1) | p2p
  bool p2p = false;
  uint64_t index = 0;     // N-th collective (sharedRes collOpCount) or p2p op of the channel
  int nsubs = 0, done = 0, pattern = -1, state = 0;
  std::string pattern_name;
  std::vector<ProxySub> subs;
};

struct ChannelPeerConn {
  int peer = -1;
  bool send = false, recv = false;  // any connector of that direction connected
};

struct ChannelState {
  int index = 0, id = -1;
  std::vector<ChannelPeerConn> peers;  // connected peers only
};

struct CommState {
  uint64_t addr = 0;
  uint64_t comm_hash = 0;
  int rank = -1, nranks = 0, cuda_dev = -1;
  std::string bus_id;               // "0000:3b:00.0"
  int init_state = 0;               // ncclResult_t; 7 = ncclInProgress (init not finished)
  std::optional<int> async_result;
  std::optional<uint32_t> abort_flag;
  std::optional<uint64_t> op_count, coll_op_count;
  std::vector<uint64_t> seq_numbers;  // per function (Broadcast, Reduce, AllGather, ReduceScatter, AllReduce); empty < 2.23.4
  int n_channels = 0;
  std::vector<ChannelState> channels;
  std::optional<bool> owner_ok;     // sharedRes->owner == this comm (the comm that created the resources)
  std::optional<bool> in_ras_list;  // listed in NCCL's RAS ncclComms (2.24+ with .symtab)
  bool proxy_present = false;
  std::optional<int> proxy_tp_rank;
  std::optional<bool> proxy_thread_found;  // a thread's fs_base equals the proxy progress thread
  std::vector<ProxyOp> proxy_ops;
  bool proxy_ops_truncated = false;
  bool consistent = true;           // two back-to-back reads agreed
  int read_attempts = 1;
  std::vector<std::string> notes;
  std::string hash_hex() const;
};

struct ScanStats {
  uint64_t regions = 0, bytes_scanned = 0, bytes_skipped = 0;
  uint64_t magic_hits = 0, no_end_magic = 0, invalid = 0;
  double ms = 0;
  bool budget_exceeded = false;
};

struct ProcessAttach {
  std::string source;   // "pid 1234" | core path
  std::string kind;     // live | core
  std::string host, command;
  int pid = 0;
  std::string status;   // ok | no_nccl | no_layout | no_comm | unsupported | unreadable | wrong_library
  std::string reason;   // one line when status != ok
  // Something the read needed was missing (a truncated core): what was
  // decoded is right, but a communicator may have been lost. Exit 3.
  bool incomplete = false;
  // The NCCL image.
  std::string library, library_opened, version_string, build_id;
  std::string version;  // "2.28.9"
  bool static_link = false;
  std::string layout_source, layout_label;  // dwarf | table | magic-distance, and its label
  std::vector<CommState> comms;
  ScanStats scan;
  int samples = 1;
  double sample_interval_s = 0;
  std::vector<std::string> notes;
};

nlohmann::json to_json(const ProcessAttach& p);
ProcessAttach process_attach_from_json(const nlohmann::json& j);  // tolerant: missing fields keep defaults

// "0000:3b:00.0" from NCCL's int64 busId (busIdToInt64 of the PCI string).
std::string bus_id_string(int64_t id);
// ncclResult_t names ("ncclInProgress").
std::string nccl_result_name(int code);

}  // namespace ccdiag::nccl::attach
