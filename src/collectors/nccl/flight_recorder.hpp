// Reader of the flight-recorder files written by libnccl-profiler-ccdiag.so
// (layout: tools/nccl-profiler-plugin/ccdiag_fr_layout.h).
//
// The files live in /dev/shm (or $CCDIAG_NCCL_DIR), one per communicator and
// rank: ccdiag-nccl-<pid>-<commHash>-<rank>.fr. Reading needs no ptrace and no
// cooperation from the process: it works while every thread is stuck, after
// the process died, and on copies saved in a bundle (raw/nccl/fr/*.fr).
//
// parse_flight_file is pure and total: a short, foreign or newer-layout file
// is an Error naming it; a channel record caught mid-write (odd seqlock) is
// kept and flagged `torn`, never trusted silently.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/result.hpp"

namespace ccdiag::nccl {

inline constexpr int kFrFuncCount = 8;  // Broadcast, Reduce, AllGather, ReduceScatter, AllReduce, Send, Recv, other
std::string_view fr_func_name(int index);

struct FrOp {
  uint64_t ticket = 0;      // order of arrival on this rank (ring generation - 1)
  std::string kind;         // "coll" | "p2p"
  uint64_t seq = 0;         // NCCL seqNumber (coll, same as RAS counts) or p2p counter
  std::string func, dtype, algo, proto;
  int func_index = 7;
  uint64_t count = 0;
  int peer = -1;            // coll: root; p2p: peer
  int n_channels = 0;
  std::string state;        // "started" | "enqueued" | "proxy" | "done"
  int proxy_active = 0, proxy_total = 0, kernel_started = 0, kernel_stopped = 0;
  uint64_t start_ns = 0, enqueued_ns = 0, last_proxy_ns = 0, done_ns = 0;
};

struct FrChannel {
  int channel = 0;
  bool is_send = false;
  int peer = -1;
  int pid = 0;
  int n_steps = 0, chunk_size = 0, last_step = -1, steps_done = 0;
  int step_state = 0;       // ncclProfilerEventState_t value, 0 started, 100 done
  std::optional<uint64_t> op_seq;  // parent op, when known (not for PXN ops)
  int op_slot = -1;
  uint64_t op_gen = 0;
  uint64_t op_start_ns = 0, op_stop_ns = 0, step_ns = 0, trans_size = 0;
  bool torn = false;        // caught mid-write in every read attempt
  bool active() const { return op_stop_ns == 0; }
};

struct FrKernel {
  int channel = 0;
  std::optional<uint64_t> op_seq;
  int op_slot = -1;
  uint64_t op_gen = 0;
  uint64_t start_ns = 0, stop_ns = 0, start_ptimer = 0, stop_ptimer = 0;
};

struct FrSnapshot {
  std::string source;       // file it was read from
  uint64_t comm_hash = 0;
  int rank = -1, nranks = 0, nnodes = 0, pid = 0, abi_version = 0;
  uint32_t event_mask = 0;
  std::string host, comm_name;
  uint64_t created_ns = 0, finalized_ns = 0;
  uint64_t heartbeat_ns = 0;  // last event of the proxy thread
  int proxy_ctrl_state = 0;
  uint64_t proxy_ctrl_ns = 0;
  std::array<uint64_t, kFrFuncCount> last_seq{};  // last coll seqNumber enqueued + 1 (0 none); p2p: count
  uint64_t events = 0, dropped = 0, ring_head = 0;
  std::vector<FrOp> ops;          // oldest first
  std::vector<FrChannel> channels;  // slots ever used
  std::vector<FrKernel> kernels;    // slots ever used
  uint64_t op_gen_of(size_t i) const { return ops[i].ticket + 1; }
};

// "SendGPUWait", "RecvWait", ..., "started", "done", or the number.
std::string step_state_name(int state);
std::string proxy_ctrl_state_name(int state);

// Parses one file's bytes. Pure.
Result<FrSnapshot> parse_flight_file(std::string_view bytes, const std::string& source);

// Reads a live or saved file (a `.fr.b64` bundle copy is decoded); re-reads
// (up to 3 times) while a channel record is mid-write. Refuses symlinks,
// non-regular files and files over 1 MiB.
Result<FrSnapshot> read_flight_file(const std::string& path);

// Files named ccdiag-nccl-*.fr (or *.fr.b64) directly in `dir` (sorted). Missing dir: empty.
std::vector<std::string> list_flight_files(const std::string& dir);

// The default directory: $CCDIAG_NCCL_DIR or <root>/dev/shm.
std::string default_flight_dir(const std::string& root_prefix);

nlohmann::json to_json(const FrSnapshot& s);

// "0x" + 16 lowercase hex digits (Subject::comm spelling).
std::string comm_hex(uint64_t hash);

}  // namespace ccdiag::nccl
