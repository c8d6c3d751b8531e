#include "collectors/nccl/flight_recorder.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "collectors/nccl/nccl_artifacts.hpp"

// The layout is owned by the plugin; reader and writer compile the same header.
#include "../../../tools/nccl-profiler-plugin/ccdiag_fr_layout.h"

namespace ccdiag::nccl {

namespace {

constexpr size_t kMaxFile = 1 << 20;

std::string fixed_string(const char* p, size_t n) {
  size_t len = 0;
  while (len < n && p[len] != '\0') ++len;
  std::string s(p, len);
  // Names come from the job (commName) and the host; keep them printable.
  for (auto& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return s;
}

std::string op_state_name(int32_t s) {
  switch (s) {
    case CCDIAG_FR_OP_STARTED: return "started";
    case CCDIAG_FR_OP_ENQUEUED: return "enqueued";
    case CCDIAG_FR_OP_PROXY: return "proxy";
    case CCDIAG_FR_OP_DONE: return "done";
    default: return "unknown";
  }
}

bool odd_lock(const ccdiag_fr_chan& c) { return (c.lock & 1u) != 0; }

}  // namespace

std::string_view fr_func_name(int index) {
  static constexpr std::string_view names[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                               "AllReduce", "Send",   "Recv",      "other"};
  return (index >= 0 && index < kFrFuncCount) ? names[index] : "other";
}

std::string step_state_name(int state) {
  switch (state) {
    case CCDIAG_FR_STEP_STARTED: return "started";
    case CCDIAG_FR_STEP_DONE: return "done";
    case 8: return "SendGPUWait";
    case 20: return "SendPeerWait";
    case 9: return "SendWait";
    case 10: return "RecvWait";
    case 11: return "RecvFlushWait";
    case 12: return "RecvGPUWait";
    default: return std::to_string(state);
  }
}

std::string proxy_ctrl_state_name(int state) {
  switch (state) {
    case 0: return "none";
    case 13: return "Idle";
    case 14: return "Active";
    case 15: return "Sleep";
    case 16: return "Wakeup";
    case 17: return "Append";
    case 18: return "AppendEnd";
    default: return std::to_string(state);
  }
}

std::string comm_hex(uint64_t hash) { return fmt::format("0x{:016x}", hash); }

Result<FrSnapshot> parse_flight_file(std::string_view bytes, const std::string& source) {
  if (bytes.size() < sizeof(ccdiag_fr_header)) return make_error("not a ccdiag flight-recorder file (too short)", source);
  ccdiag_fr_header h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  if (h.magic != CCDIAG_FR_MAGIC) return make_error("not a ccdiag flight-recorder file (bad magic)", source);
  if (h.layout_version != CCDIAG_FR_LAYOUT_VERSION)
    return make_error(fmt::format("flight-recorder layout version {} is not supported (this ccdiag reads {})",
                                  h.layout_version, CCDIAG_FR_LAYOUT_VERSION),
                      source, "use the ccdiag that matches the installed profiler plugin");
  if (h.file_size != sizeof(ccdiag_fr_file) || h.ring_size != CCDIAG_FR_RING_SIZE ||
      h.max_channels != CCDIAG_FR_MAX_CHANNELS)
    return make_error("flight-recorder file has an unexpected geometry", source);
  if (bytes.size() < sizeof(ccdiag_fr_file)) return make_error("flight-recorder file is truncated", source);
  // Copy into an aligned object: the bytes may come from any buffer.
  auto file = std::make_unique<ccdiag_fr_file>();
  std::memcpy(file.get(), bytes.data(), sizeof(ccdiag_fr_file));
  const auto& f = *file;

  FrSnapshot s;
  s.source = source;
  s.comm_hash = h.comm_hash;
  s.rank = h.rank;
  s.nranks = h.nranks;
  s.nnodes = h.nnodes;
  s.pid = h.pid;
  s.abi_version = h.abi_version;
  s.event_mask = h.event_mask;
  s.host = fixed_string(h.host, sizeof(h.host));
  s.comm_name = fixed_string(h.comm_name, sizeof(h.comm_name));
  s.created_ns = h.created_ns;
  s.finalized_ns = h.finalized_ns;
  s.heartbeat_ns = h.proxy_heartbeat_ns;
  s.proxy_ctrl_state = h.proxy_ctrl_state;
  s.proxy_ctrl_ns = h.proxy_ctrl_ns;
  for (int i = 0; i < kFrFuncCount; ++i) s.last_seq[static_cast<size_t>(i)] = h.last_seq[i];
  s.events = h.events;
  s.dropped = h.dropped;
  s.ring_head = h.ring_head;

  for (const auto& o : f.ops) {
    if (o.gen == 0) continue;  // never used, or being refilled right now
    FrOp op;
    op.ticket = o.gen - 1;
    op.kind = o.kind == CCDIAG_FR_OP_P2P ? "p2p" : "coll";
    op.seq = o.seq;
    op.func = fixed_string(o.func, sizeof(o.func));
    op.dtype = fixed_string(o.dtype, sizeof(o.dtype));
    op.algo = fixed_string(o.algo, sizeof(o.algo));
    op.proto = fixed_string(o.proto, sizeof(o.proto));
    op.func_index = o.func_index < kFrFuncCount ? o.func_index : 7;
    op.count = o.count;
    op.peer = o.peer;
    op.n_channels = o.n_channels;
    op.state = op_state_name(o.state);
    op.proxy_active = o.proxy_active;
    op.proxy_total = o.proxy_total;
    op.kernel_started = o.kernel_started;
    op.kernel_stopped = o.kernel_stopped;
    op.start_ns = o.start_ns;
    op.enqueued_ns = o.enqueued_ns;
    op.last_proxy_ns = o.last_proxy_ns;
    op.done_ns = o.done_ns;
    s.ops.push_back(std::move(op));
  }
  std::sort(s.ops.begin(), s.ops.end(), [](const FrOp& a, const FrOp& b) { return a.ticket < b.ticket; });

  auto seq_of = [&f](int32_t slot, uint64_t gen) -> std::optional<uint64_t> {
    if (slot < 0 || static_cast<uint32_t>(slot) >= CCDIAG_FR_RING_SIZE || gen == 0) return std::nullopt;
    const auto& o = f.ops[slot];
    if (o.gen != gen) return std::nullopt;  // the op was recycled since
    return o.seq;
  };
  for (const auto& c : f.chans) {
    if (c.gen == 0) continue;
    FrChannel ch;
    ch.channel = c.channel;
    ch.is_send = c.is_send != 0;
    ch.peer = c.peer;
    ch.pid = c.pid;
    ch.n_steps = c.n_steps;
    ch.chunk_size = c.chunk_size;
    ch.last_step = c.last_step;
    ch.steps_done = c.steps_done;
    ch.step_state = c.step_state;
    ch.op_slot = c.op_slot;
    ch.op_gen = c.op_gen;
    ch.op_seq = c.op_gen ? std::optional<uint64_t>(c.op_seq) : std::nullopt;
    if (!seq_of(c.op_slot, c.op_gen)) ch.op_slot = -1;
    ch.op_start_ns = c.op_start_ns;
    ch.op_stop_ns = c.op_stop_ns;
    ch.step_ns = c.step_ns;
    ch.trans_size = c.trans_size;
    ch.torn = odd_lock(c);
    s.channels.push_back(std::move(ch));
  }
  for (uint32_t i = 0; i < CCDIAG_FR_MAX_CHANNELS; ++i) {
    const auto& k = f.kernels[i];
    if (k.gen == 0) continue;
    FrKernel kk;
    kk.channel = static_cast<int>(i);
    kk.op_seq = k.op_gen ? std::optional<uint64_t>(k.op_seq) : std::nullopt;
    kk.op_slot = seq_of(k.op_slot, k.op_gen) ? k.op_slot : -1;
    kk.op_gen = k.op_gen;
    kk.start_ns = k.start_ns;
    kk.stop_ns = k.stop_ns;
    kk.start_ptimer = k.start_ptimer;
    kk.stop_ptimer = k.stop_ptimer;
    s.kernels.push_back(kk);
  }
  return s;
}

Result<FrSnapshot> read_flight_file(const std::string& path) {
  std::string last_error;
  for (int attempt = 0; attempt < 3; ++attempt) {
    int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return make_error(std::strerror(errno), path);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      return make_error("not a regular file", path);
    }
    if (static_cast<size_t>(st.st_size) > kMaxFile) {
      ::close(fd);
      return make_error("too large for a flight-recorder file", path);
    }
    std::string buf(static_cast<size_t>(st.st_size), '\0');
    size_t got = 0;
    while (got < buf.size()) {
      ssize_t n = ::pread(fd, buf.data() + got, buf.size() - got, static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    ::close(fd);
    buf.resize(got);
    if (path.size() > 4 && path.compare(path.size() - 4, 4, ".b64") == 0) {
      // A copy from a bundle written by `ccdiag collect` (raw/nccl/fr/*.fr.b64).
      std::string decoded;
      if (!base64_decode(buf, decoded)) return make_error("bad base64 in a flight-recorder copy", path);
      buf = std::move(decoded);
    }
    auto snap = parse_flight_file(buf, path);
    if (!snap) return snap;
    bool torn = std::any_of(snap->channels.begin(), snap->channels.end(), [](const FrChannel& c) { return c.torn; });
    if (!torn || attempt == 2) return snap;
  }
  return make_error("unreadable", path);
}

std::vector<std::string> list_flight_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.rfind(CCDIAG_FR_FILE_PREFIX, 0) != 0) continue;
    const bool fr = name.size() > 3 && name.compare(name.size() - 3, 3, CCDIAG_FR_FILE_SUFFIX) == 0;
    const bool b64 = name.size() > 7 && name.compare(name.size() - 7, 7, CCDIAG_FR_FILE_SUFFIX ".b64") == 0;
    if (!fr && !b64) continue;
    out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string default_flight_dir(const std::string& root_prefix) {
  const char* d = std::getenv("CCDIAG_NCCL_DIR");
  if (d && *d) return d;
  return root_prefix + "/dev/shm";
}

nlohmann::json to_json(const FrSnapshot& s) {
  using nlohmann::json;
  json ops = json::array();
  for (const auto& o : s.ops)
    ops.push_back({{"ticket", o.ticket},       {"kind", o.kind},         {"seq", o.seq},
                   {"func", o.func},           {"count", o.count},       {"dtype", o.dtype},
                   {"algo", o.algo},           {"proto", o.proto},       {"peer", o.peer},
                   {"n_channels", o.n_channels}, {"state", o.state},     {"proxy_active", o.proxy_active},
                   {"proxy_total", o.proxy_total}, {"kernel_started", o.kernel_started},
                   {"kernel_stopped", o.kernel_stopped}, {"start_ns", o.start_ns},
                   {"enqueued_ns", o.enqueued_ns}, {"done_ns", o.done_ns}});
  json chans = json::array();
  for (const auto& c : s.channels) {
    json j{{"channel", c.channel},         {"direction", c.is_send ? "send" : "recv"},
           {"peer", c.peer},               {"pid", c.pid},
           {"n_steps", c.n_steps},         {"last_step", c.last_step},
           {"steps_done", c.steps_done},   {"state", step_state_name(c.step_state)},
           {"active", c.active()},         {"op_start_ns", c.op_start_ns},
           {"op_stop_ns", c.op_stop_ns},   {"step_ns", c.step_ns},
           {"torn", c.torn}};
    if (c.op_seq) j["op_seq"] = *c.op_seq;
    chans.push_back(std::move(j));
  }
  json kernels = json::array();
  for (const auto& k : s.kernels) {
    json j{{"channel", k.channel}, {"start_ns", k.start_ns}, {"stop_ns", k.stop_ns},
           {"start_ptimer", k.start_ptimer}, {"stop_ptimer", k.stop_ptimer}};
    if (k.op_seq) j["op_seq"] = *k.op_seq;
    kernels.push_back(std::move(j));
  }
  json last = json::object();
  for (int i = 0; i < kFrFuncCount; ++i)
    if (s.last_seq[static_cast<size_t>(i)] != 0) last[std::string(fr_func_name(i))] = s.last_seq[static_cast<size_t>(i)];
  return {{"source", s.source},
          {"comm", comm_hex(s.comm_hash)},
          {"comm_name", s.comm_name},
          {"rank", s.rank},
          {"nranks", s.nranks},
          {"nnodes", s.nnodes},
          {"pid", s.pid},
          {"host", s.host},
          {"abi_version", s.abi_version},
          {"event_mask", s.event_mask},
          {"created_ns", s.created_ns},
          {"finalized_ns", s.finalized_ns},
          {"proxy_heartbeat_ns", s.heartbeat_ns},
          {"proxy_ctrl_state", proxy_ctrl_state_name(s.proxy_ctrl_state)},
          {"launched", last},
          {"events", s.events},
          {"dropped", s.dropped},
          {"ops", ops},
          {"channels", chans},
          {"kernels", kernels}};
}

}  // namespace ccdiag::nccl
