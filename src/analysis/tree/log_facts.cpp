#include "analysis/tree/log_facts.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include <re2/re2.h>

#include "analysis/tree/channel_edge_line.hpp"
#include "analysis/tree/line_text.hpp"
#include "analysis/tree/line_who.hpp"
#include "analysis/tree/literal_gate.hpp"
#include "analysis/tree/log_cues.hpp"
#include "analysis/tree/pasted_blocks.hpp"
#include "ccdiag/line_prefix.hpp"
#include "ccdiag/nccl_coll_line.hpp"
#include "ccdiag/signal_names.hpp"
#include "ccdiag/text_scan.hpp"

namespace ccdiag {

namespace {

constexpr size_t kMaxLine = 8192;  // real lines are far shorter; a pasted blob is cut, not scanned whole

// A field pattern and a literal that every line it matches contains. Most
// lines of a real log (training output, NCCL set-up chatter) lack the literal,
// so the substring search rejects them at memchr speed and RE2 (linear time,
// no recursion) runs on the few that have it. std::regex here cost 4 MB/s.
class Field {
 public:
  Field(std::string_view literal, const char* pattern) : literal_(literal), re_(pattern) {}
  // Unanchored search; fills the first N capture groups (unmatched optional
  // groups come back empty).
  template <typename... Out>
  bool find(const LineText& line, Out*... out) const {
    if (!literal_.empty() && !line.has(literal_)) return false;
    return RE2::PartialMatch(re2::StringPiece(line.text().data(), line.text().size()), re_, out...);
  }
  template <typename... Out>
  bool find(std::string_view line, Out*... out) const {
    if (!literal_.empty() && line.find(literal_) == std::string_view::npos) return false;
    return RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), re_, out...);
  }
  const RE2& re() const { return re_; }
  std::string_view literal() const { return literal_; }

 private:
  std::string_view literal_;
  RE2 re_;
};

int to_int(const std::string& s) { return std::stoi(s); }
int64_t to_i64(const std::string& s) { return std::stoll(s); }

struct Signal {
  const char* id;                       // finding id suffix: "log.<id>"
  std::vector<std::string_view> all;         // every substring must occur
  std::vector<std::string_view> any;         // at least one must occur (when non-empty)
  std::vector<std::string_view> none;        // none may occur
  Layer layer;
  Severity severity;
  FindingRole role;
  const char* summary;
  std::vector<CauseSupport> supports;
  std::vector<std::string_view> any2 = {};   // and at least one of these (when non-empty)
  // `any` counts only outside file paths: "bootstrap" in NVSHMEM's
  // ".../modules/bootstrap/uid/bootstrap_uid.cpp:90: non-zero status: -6"
  // names the file that propagated a status code, not a failure to reach
  // the rendezvous (NCCL's own "bootstrap.cc:72 NCCL WARN ..." has no '/').
  bool any_outside_paths = false;
};

// Mechanisms, not wordings: each entry names the failing mechanism and is
// matched by the stable parts of the messages NCCL, CUDA, PyTorch and
// torchrun print for it across versions. Weights are likelihood ratios
// (docs/decision-tree.md explains the scale: ~2-5 ambiguous, ~10-30 a
// specific mechanism, >= 40 a message that only that cause produces).
const std::vector<Signal>& signals() {
  using L = Layer;
  using S = Severity;
  using R = FindingRole;
  static const std::vector<Signal> table = {
      {"shm_no_space", {"/dev/shm"}, {"No space left", "failed to extend"}, {}, L::system_config, S::error, R::primary,
       "NCCL could not grow a /dev/shm segment (ENOSPC): /dev/shm is too small",
       {{"container_shm_too_small", 60}}},
      {"shm_segment_vanished", {"No such file or directory"}, {"/dev/shm/nccl", "shared memory segment"}, {},
       L::system_config, S::error, R::primary,
       "an NCCL shared-memory segment disappeared (ENOENT) while in use",
       {{"removeipc_deletes_shm", 40}, {"container_shm_too_small", 2}}},
      {"socket_family_invalid", {"is neither AF_INET"}, {}, {}, L::nccl, S::error, R::primary,
       "NCCL tried to connect to an uninitialised socket address (no usable interface was found)",
       {{"wrong_network_interface", 15}, {"nccl_bug", 2}}},
      {"no_socket_interface", {}, {"no socket interface found", "No usable listening interface", "No usable interface"}, {},
       L::system_config, S::error, R::primary, "NCCL found no network interface matching its filter",
       {{"wrong_network_interface", 40}}},
      {"ibv_enodev", {"failed with error No such device", "ibv_"}, {}, {}, L::transport, S::error, R::primary,
       "a verbs call on the selected HCA failed with ENODEV: the device is not usable here",
       {{"unusable_hca_selected", 40}}},
      {"ibv_unreachable", {"ibv_", "failed with error"}, {"Network is unreachable", "No route to host"}, {},
       L::transport, S::error, R::primary, "a QP could not be connected: no route to the peer NIC",
       {{"nic_pair_unreachable", 60}, {"roce_gid_index_mismatch", 4}}},
      {"ibv_modify_qp_einval", {"ibv_modify_qp failed with error Invalid argument"}, {}, {}, L::transport, S::error,
       R::primary, "QP transition rejected (EINVAL): GID index, MTU or path attributes the NIC cannot use",
       {{"roce_gid_index_mismatch", 10}, {"mtu_mismatch", 3}, {"nccl_config_error", 2}}},
      // ibv_reg_mr / ibv_reg_mr_iova2 pin host pages: ENOMEM there is the locked-memory limit.
      {"ib_reg_mr_failed", {"ibv_reg_"}, {"failed", "Cannot allocate memory"}, {"Bad address", "dmabuf"}, L::transport, S::error,
       R::primary, "memory registration with the HCA failed",
       {{"memlock_limit_too_low", 12}, {"gpudirect_rdma_module_missing", 3}}},
      // ibv_reg_dmabuf_mr (NCCL >= 2.19) registers GPU memory, which RLIMIT_MEMLOCK does not cover: ENOMEM
      // is the size registered (NCCL_BUFFSIZE, channel counts) against BAR1 / NIC translation resources.
      {"ib_reg_dmabuf_failed", {"ibv_reg_dmabuf_mr"}, {"failed", "Cannot allocate memory"}, {"Bad address"},
       L::transport, S::error, R::primary, "registering GPU memory with the HCA by DMA-BUF failed",
       {{"nccl_config_error", 3}, {"gpudirect_rdma_module_missing", 1.5}}},
      {"ib_reg_mr_bad_address", {"ibv_reg_", "Bad address"}, {}, {}, L::transport, S::error, R::primary,
       "registering GPU memory with the HCA failed (EFAULT): no GPUDirect RDMA peer-memory support",
       {{"gpudirect_rdma_module_missing", 100}}},
      // libfabric (EFA, aws-ofi-nccl) reports errno values raw: -12 is ENOMEM, which on an
      // event queue, completion queue or memory registration is pinned memory the
      // locked-memory limit refuses (a container's default 64 KiB).
      {"ofi_enomem", {"(-12)"}, {"prov/", "NET/OFI", "libfabric"}, {}, L::transport, S::error, R::primary,
       "a libfabric provider call failed with ENOMEM (-12): pinned memory refused",
       {{"memlock_limit_too_low", 12}, {"gpudirect_rdma_module_missing", 1.5}}},
      {"ofi_enomem_text", {"NET/OFI"}, {"Cannot allocate memory", "RC: -12", "ERROR: -12"}, {}, L::transport, S::error,
       R::primary, "the aws-ofi-nccl plugin failed with ENOMEM: pinned memory refused",
       {{"memlock_limit_too_low", 12}, {"gpudirect_rdma_module_missing", 1.5}}},
      {"memlock_limit", {}, {"RLIMIT_MEMLOCK", "memlock limit", "ulimit -l"}, {}, L::system_config, S::error, R::primary,
       "the locked-memory limit is too low for RDMA registration", {{"memlock_limit_too_low", 100}}},
      {"gdr_disabled", {"GPU Direct RDMA Disabled"}, {}, {}, L::system_config, S::warning, R::primary,
       "NCCL runs without GPUDirect RDMA on this HCA", {{"gpudirect_rdma_module_missing", 3}}},
      {"watchdog_timeout", {}, {"Watchdog caught collective operation timeout", "WorkNCCL::checkTimeout",
                                "ncclCommWatchdog", "collective operation timeout"},
       {}, L::framework, S::error, R::symptom, "the PyTorch NCCL watchdog timed out a collective that never completed",
       {}},
      {"collective_mismatch", {"Detected mismatch between collectives"}, {}, {}, L::framework, S::critical, R::primary,
       "ranks issued different collectives at the same sequence number",
       // A rank that skipped a collective meets its peers' next one: the
       // check reports a mismatch then too, so the line also supports a skip.
       {{"mismatched_collectives", 80}, {"rank_skips_collective", 15}}},
      // torch's allocator says "CUDA out of memory"; a CUDA API call failing (a graph capture, an IPC
      // handle, a kernel launch) surfaces as the runtime's error string "CUDA error: out of memory".
      {"cuda_oom", {}, {"CUDA out of memory", "OutOfMemoryError", "Cuda failure 'out of memory'",
                        "cudaErrorMemoryAllocation", "CUDA error: out of memory", "CUDA_ERROR_OUT_OF_MEMORY"},
       {}, L::framework, S::error, R::primary, "a rank ran out of GPU memory", {{"gpu_memory_exhausted", 100}}},
      // NCCL's own device allocations (alloc.h: "Failed to CUDA calloc [async] N bytes"): cudaMalloc failed
      // under NCCL, most often because the workload left no memory (communicators are created lazily, at the
      // step's memory peak); the CUDA error itself is not always printed.
      {"nccl_cuda_alloc_failed", {}, {"Failed to CUDA calloc", "Failed to CUDA malloc"}, {}, L::framework, S::error,
       R::primary, "NCCL could not allocate GPU memory for its buffers", {{"gpu_memory_exhausted", 20}}},
      {"unhandled_cuda_error", {"unhandled cuda error"}, {}, {}, L::nccl, S::error, R::symptom,
       "NCCL reported an unhandled CUDA error", {}},
      {"nccl_internal_error", {}, {"ncclInternalError", "internal error - please report"}, {}, L::nccl, S::error,
       R::symptom, "NCCL reported an internal error", {}},
      {"peer_gone", {}, {"Connection closed by remote peer", "remote process exited", "Connection reset by peer",
                         "peer has exited", "Broken pipe"},
       {}, L::transport, S::warning, R::cascade, "a peer closed its connection (it failed or exited first)", {}},
      {"connect_refused", {"Connection refused"}, {"onnect", "socket"}, {"bootstrap", "Bootstrap", "TCPStore"},
       L::transport, S::error, R::primary, "a TCP connection to a peer was refused",
       {{"socket_connection_failure", 40}, {"firewall_blocked_ports", 3}, {"rank_process_died", 2}}},
      {"connect_timeout", {}, {"Connection timed out", "No route to host"},
       {"bootstrap", "Bootstrap", "TCPStore", "ibv_", "QP to RT", "modify QP"},
       L::transport, S::error, R::primary, "a TCP connection to a peer timed out (packets dropped on the way)",
       {{"firewall_blocked_ports", 10}, {"socket_connection_failure", 6}}},
      // c10d's TCPStore client ("[c10d] The client socket has timed out after 1800s while trying to connect
      // to (host, port)") is the rendezvous too.
      {"bootstrap_failed", {}, {"bootstrap", "Bootstrap", "TCPStore", "DistNetworkError", "rendezvous",
                                "[c10d] The client socket"},
       {"Bootstrap : Using", "NCCL INFO", "bootstrapSplit", "EADDRINUSE", "ddress already in use",
        "RendezvousTimeoutError"},
       L::transport,
       S::error, R::primary,
       "ranks could not reach the rendezvous / bootstrap root",
       {{"bootstrap_unreachable", 40}, {"firewall_blocked_ports", 2}, {"hostname_resolves_to_loopback", 2}},
       {"timed out", "Timed out", "timeout", "Timeout", "failed", "Failed", "refused", "unreachable"}, true},
      // torchelastic's rendezvous did not gather --nnodes agents before its
      // join timeout: this agent reached the endpoint (it waited there); the
      // others never came (not started, started late, another --rdzv-id or
      // endpoint, or unable to reach it). Only a weak lead on reachability.
      {"rendezvous_timeout", {"RendezvousTimeoutError"}, {}, {}, L::framework, S::error, R::symptom,
       "torchelastic's rendezvous timed out: not every node's agent joined before the join timeout",
       {{"bootstrap_unreachable", 4}}},
      // The server side of the rendezvous or bootstrap could not bind its port
      // (c10d: "The server socket has failed to listen on any local network
      // address. port: 29500, ... code: -98, name: EADDRINUSE"; errno 98 from
      // a bind elsewhere): not reachability, the port is taken on this host.
      {"port_in_use", {}, {"EADDRINUSE", "ddress already in use"}, {}, L::system_config, S::error, R::primary,
       "the rendezvous/bootstrap server could not listen: its port is already in use on this host",
       {{"rendezvous_port_in_use", 200}}},
      // getaddrinfo failed for a name the job connects to (c10d's socket.cpp:
      // "The IPv4 network addresses of (host, 29500) cannot be retrieved (gai
      // error: -2 - Name or service not known)"; NCCL's and Python's wordings
      // of EAI_NONAME / EAI_AGAIN / EAI_NODATA).
      {"name_unresolved", {}, {"gai error", "Name or service not known", "Temporary failure in name resolution",
                               "No address associated with hostname", "nodename nor servname provided",
                               "getaddrinfo failed"},
       {}, L::system_config, S::error, R::primary, "a host name the job connects to does not resolve",
       {{"hostname_not_resolvable", 150}, {"wrong_network_interface", 1.5}}},
      {"bootstrap_loopback", {"Bootstrap : Using"}, {"lo:", "127.0."}, {}, L::system_config, S::warning, R::primary,
       // Only a lead by itself: on one host (a single-node test, NCCL_SOCKET_IFNAME=lo) loopback is
       // right. Across hosts it cannot work; the socket_ifname rule weighs it when the inputs span hosts.
       "NCCL bootstraps on the loopback interface", {{"hostname_resolves_to_loopback", 2}, {"wrong_network_interface", 1.5}}},
      {"duplicate_gpu", {}, {"Duplicate GPU detected", "same CUDA device", "both on CUDA device"}, {}, L::framework,
       S::error, R::primary, "two ranks use the same GPU", {{"wrong_device_binding", 60}}},
      {"nccl_version_mismatch", {}, {"NCCL version mismatch", "Mismatched NCCL version", "nccl version mismatch"}, {},
       L::nccl, S::error, R::primary, "NCCL reported different versions across ranks", {{"nccl_version_mismatch", 200}}},
      // Not NCCL's INFO that the default name (libnccl-net.so) is absent and
      // its internal transports are used: it opens nearly every NCCL log.
      // "incompatible" counts only on a line about a net plugin.
      {"net_plugin_failed", {}, {"Failed to initialize any NET plugin", "NET/Plugin: Failed", "NET/Plugin : Failed",
                                 "NET/Plugin: Could not", "incompatible", "NET/Plugin : Plugin load returned",
                                 "NET/Plugin: Plugin load returned"},
       {"No plugin found", "sing internal", "Could not find: libnccl-net.so", "(libnccl-net.so) returned",
        ": libnccl-net.so: cannot open shared object file"},
       L::nccl, S::error, R::primary, "the NCCL network plugin failed to load or initialise",
       {{"net_plugin_mismatch", 150}}, {"NET/Plugin", "NET plugin", "net plugin", "libnccl-net"}},
      // Not NCCL's advice line after any NVLS error ("Disable NVLS (NCCL_NVLS_ENABLE=0) if you wish to avoid
      // this error"): it follows fabric failures too.
      {"nvls_failed", {}, {"NVLS", "NVLink SHARP"}, {"NCCL INFO", "present state", "error 401", "NCCL_NVLS_ENABLE=0"},
       L::nccl, S::error,
       R::primary, "NVLink SHARP (NVLS) setup failed", {{"nvls_path_failure", 200}, {"fabric_manager_state", 5}},
       {"Failed", "failed", "error", "Error"}},
      // CUDA_ERROR_ILLEGAL_STATE (401, "the operation cannot be performed in the present state") from a
      // multicast call: the NVSwitch fabric that multicast objects need is not up, which is the fabric
      // manager's job; NVLS itself (out of memory, invalid argument) fails with other codes.
      {"nvls_fabric_not_ready", {}, {"NVLS", "NVLink SHARP", "ulticast"}, {"NCCL INFO"}, L::system_config, S::error,
       R::primary, "an NVLS multicast call failed because the NVSwitch fabric is not in a usable state",
       {{"fabric_manager_not_running", 60}, {"fabric_manager_state", 40}, {"nvls_path_failure", 10}},
       {"present state", "error 401"}},
      {"no_algorithm", {}, {"no algorithm/protocol available", "No algorithm/protocol available"}, {}, L::nccl,
       S::error, R::primary, "NCCL_ALGO/NCCL_PROTO settings leave no usable algorithm", {{"nccl_config_error", 200}}},
      {"invalid_nccl_env", {"NCCL WARN", "NCCL_"}, {"Invalid", "invalid", "Unknown", "unknown", "Ignoring"}, {},
       L::nccl, S::warning, R::primary, "NCCL rejected an NCCL_* setting", {{"nccl_config_error", 20}}},
      // CUDA's and HIP's names for the capture errors (cudaErrorStreamCapture*, cudaErrorCapturedEvent /
      // hipErrorCapturedEvent: "operation not permitted on an event last recorded in a capturing stream").
      {"stream_capture", {}, {"stream is capturing", "cudaErrorStreamCapture", "capture was invalidated",
                              "in a capturing stream", "ErrorCapturedEvent", "hipErrorStreamCapture",
                              "operation not permitted when stream is capturing"},
       {}, L::nccl, S::error, R::primary, "a CUDA graph capture or stream misuse broke a collective",
       {{"cuda_graph_or_stream_misuse", 300}}},
      {"topology_path", {}, {"Could not find real path for", "topo.cc"}, {"NCCL INFO"}, L::hardware, S::warning,
       R::primary, "NCCL could not map a device into the PCI topology", {{"pcie_topology_misdetected", 80}},
       {"WARN", "Could not find real path"}},
      {"system_not_ready", {}, {"system not yet initialized", "cudaErrorSystemNotReady"}, {}, L::system_config,
       S::error, R::primary, "CUDA reports the system is not initialised (NVSwitch fabric not up)",
       {{"fabric_manager_not_running", 150}, {"fabric_manager_state", 8}}},
      // The fabric manager's own start-up refusals and systemd's report of the unit ("Kernel module ib_umad
      // has not been loaded, fabric manager cannot be started", "Failed to start NVIDIA fabric manager").
      {"fabric_manager_not_started", {}, {"abric manager", "abricManager", "abricmanager"}, {"NCCL INFO"},
       L::system_config, S::error, R::primary, "the NVSwitch fabric manager did not start",
       {{"fabric_manager_not_running", 60}, {"fabric_manager_state", 4}},
       {"cannot be started", "can not be started", "Failed to start", "failed to start", "not running",
        "is not started", "failed to initialize", "Failed to initialize"}},
      {"driver_library_mismatch", {}, {"Driver/library version mismatch", "driver version is insufficient",
                                       "CUDA driver version is insufficient"},
       {}, L::system_config, S::error, R::primary, "the NVIDIA user-space library and kernel driver disagree",
       {{"driver_library_mismatch", 200}}},
      // misc/strongstream.cc: graph capture needs NCCL built with CUDA runtime >= 11.3 and a driver >= R465;
      // a pip wheel or container built for an older CUDA than the stack around it prints this.
      {"graph_capture_unsupported", {"cannot be captured in a graph"}, {}, {}, L::system_config, S::error, R::primary,
       "NCCL refuses CUDA graph capture: the NCCL build's CUDA runtime (< 11.3) or the driver (< R465) is too old "
       "for the CUDA stack around it",
       {{"driver_library_mismatch", 40}, {"cuda_graph_or_stream_misuse", 3}}},
      {"oom_killer", {"Out of memory: Killed process"}, {}, {}, L::framework, S::critical, R::primary,
       "the kernel OOM killer killed a process", {{"rank_process_died", 30}}},
      {"nvlink_inactive", {"NVLink"}, {"inactive", "Inactive", "is down", "link down"}, {}, L::hardware, S::warning,
       R::primary, "an NVLink link is inactive", {{"nvlink_down_or_degraded", 10}}},
  };
  return table;
}

// What a signal needs before anything else about it can hold: the longest
// of its "all" needles, else one of its "any" needles (LiteralGate).
std::vector<std::vector<std::string_view>> gate_needles(const std::vector<Signal>& table) {
  std::vector<std::vector<std::string_view>> out;
  for (const auto& s : table) {
    if (!s.all.empty()) {
      std::string_view longest;
      for (std::string_view a : s.all)
        if (a.size() > longest.size()) longest = a;
      out.push_back({longest});
    } else {
      out.push_back(s.any);
    }
  }
  return out;
}

// The literals Extractor::line tests for outside the signal table (its
// fields' literals, its own checks), each a literal every line that a check
// can hold on contains. A line with none of these, none of a signal's and
// none of a cue's (add_cue_literals) makes Extractor::line do nothing but
// clear source_line_next (and, with PastedBlocks::add_literals' literals
// absent too, no pasted block can start): LogFactExtractor::lines skips it. A check added to
// Extractor::line must add its literal here; the unit test "[facts-sieve]"
// compares sieved and unsieved facts on the real incident corpus and logs.
constexpr std::string_view kFactLiterals[] = {
    // NCCL's own lines by what is read in them ("NCCL" alone is every line of an NCCL_DEBUG log: the
    // nccl_lines count has a sieve set of its own, kNcclMark).
    ": opCount ", "NCCL version", "NCCL WARN", "nranks ", "GPU Direct RDMA Enabled", "remoteGid",
    " set by environment to ", "Bootstrap", "NET/", "Using interface", "client socket", "TCP client", "comm 0x", " via ", "Access Peer", "Init COMPLETE",
    "Setting affinity", "Connected all rings", "# Using devices", "Avg bus bandwidth", "Out of bounds values",
    // torchrun's failure block and signals
    "local_rank", "host", "exitcode", "received by PID", "exits with return code",
    // IB completions, RoCE, QPs, `ip addr`
    "Got completion", "inet", "RoCE", "link_layer", "IBV_WC_RETRY_EXC_ERR", "with status=12", "with error 12",
    "ibv_modify_qp",
    // a collective failed
    "Watchdog caught collective operation timeout", "Connection closed by peer", "gloo",
    // an uncaught Python exception
    "Error: ", "Exception: ",
    // a traceback frame header: the next line is its source code, not a report
    "File \"",
    // ANSI colour is removed before the checks: a literal may only appear then.
    "\x1b"};

// Set 0 (kFactMark): what Extractor::line reads. Set 1 (kBlockMark): what
// can start a pasted block; ANSI colour is removed before that is read too.
// Set 2 (kCrashMark): what opens a crash reader's window (its markers and the
// start of PyTorch's deliberate abort), so that a line the other block literals
// let through (torch's ProcessGroupNCCL lines) is not searched again for them.
// Set 3 (kNcclMark): "NCCL", for the count of NCCL lines (facts_summary) alone.
constexpr uint8_t kFactMark = 1, kBlockMark = 2, kCrashMark = 4, kNcclMark = 8;
std::vector<LineLiterals> sieve_literals() {
  LineLiterals facts;
  for (const auto& needles : gate_needles(signals())) {
    if (needles.empty()) facts.complete = false;
    for (std::string_view n : needles) facts.exact.push_back(n);
  }
  for (std::string_view l : kFactLiterals) facts.exact.push_back(l);
  add_cue_literals(facts);
  LineLiterals blocks;
  PastedBlocks::add_literals(blocks);
  blocks.exact.push_back("\x1b");
  LineLiterals crash;
  for (std::string_view l : CrashStackBlock::kMarkers) crash.exact.push_back(l);
  crash.exact.push_back(CrashStackBlock::kOpensDeliberate);
  crash.exact.push_back("\x1b");
  LineLiterals nccl;
  nccl.exact.push_back("NCCL");
  return {facts, blocks, crash, nccl};
}

// The literal gate in front of the signal table.
const LiteralGate& signal_gate() {
  // Never destroyed: freeing a Hyperscan database at exit walks a heap the
  // log's evidence filled (malloc_consolidate), ~4% of a run on a dense log.
  static const LiteralGate& gate = *new LiteralGate(gate_needles(signals()));
  return gate;
}

// Whether `needle` occurs in `line` other than inside a whitespace-delimited
// token that contains a '/' (a file path).
bool has_outside_paths(const LineText& line, std::string_view needle) {
  if (!line.has(needle)) return false;
  const std::string_view t = line.text();
  for (size_t at = t.find(needle); at != std::string_view::npos; at = t.find(needle, at + 1)) {
    size_t b = at, e = at + needle.size();
    while (b > 0 && t[b - 1] != ' ' && t[b - 1] != '\t') --b;
    while (e < t.size() && t[e] != ' ' && t[e] != '\t') ++e;
    if (t.substr(b, e - b).find('/') == std::string_view::npos) return true;
  }
  return false;
}

bool signal_matches(const Signal& s, const LineText& line) {
  for (std::string_view a : s.all)
    if (!line.has(a)) return false;
  if (!s.any.empty() && std::none_of(s.any.begin(), s.any.end(), [&](std::string_view a) {
        return s.any_outside_paths ? has_outside_paths(line, a) : line.has(a);
      }))
    return false;
  for (std::string_view n : s.none)
    if (line.has(n)) return false;
  if (!s.any2.empty() && std::none_of(s.any2.begin(), s.any2.end(), [&](std::string_view a) { return line.has(a); }))
    return false;
  return true;
}

// Exceptions that are the distributed machinery reporting someone else's
// failure; a user bug is any other exception type.
bool is_distributed_exception(const LineText& line) {
  for (const char* k : {"NCCL", "nccl", "DistBackendError", "DistError", "DistNetworkError", "DistStoreError",
                        "collective", "Watchdog", "timeout", "Timeout", "Connection", "CUDA", "cuda",
                        "Cuda error", "Cuda failure", "ChildFailedError", "mismatch", "ProcessGroup", "SignalException", "KeyboardInterrupt",
                        // mp.spawn's parent reporting a worker's end (the worker's own traceback follows).
                        "ProcessExitedException", "ProcessRaisedException",
                        // Exceptions about a host resource are the system's, not the script's.
                        "shared memory", "/dev/shm", "Gloo", "gloo", "socket", "resolve", "hostname",
                        "Address already in use", "Permission denied", "Timed out",
                        // monitored_barrier and TORCH_DISTRIBUTED_DEBUG=DETAIL's collective checks
                        "monitoredBarrier", "send/recv", "CollectiveFingerPrint",
                        // A communication library's own failure surfacing as a Python exception
                        // (tensorpipe, UCX, libfabric, verbs): the message names the library.
                        "ibv_", "ibv.h", "ibverbs", "tensorpipe", "UCX", "ucx", "libfabric", "NET/OFI", "nccl_ofi", "RDMA",
                        // ... or the GPU driver's absence ("Found no NVIDIA driver on your system").
                        "NVIDIA driver"})
    if (line.has(k)) return true;
  return false;
}

struct Extractor {
  const std::string& source;
  const std::string& file_host;
  EvidenceSet& set;
  // torchrun "Root Cause" block state: rank/host precede exitcode.
  std::optional<int> pending_rank;
  std::string pending_host;

  // Lines without an NCCL prefix ("NCCL version ...", tracebacks) come from
  // the host of the prefixed lines around them: a log file is one host's.
  std::string last_host;
  // Lines that report a failure (log_cues.hpp): counted, the first few kept
  // so an unexplained failure can be quoted instead of called healthy.
  // RoCE in use (a RoCE device in NET/IB, an Ethernet link layer or RoCE
  // GIDs in a pasted ibv_devinfo / show_gids) and a QP that could not reach
  // its peer (retry exceeded, ibv_modify_qp timed out): on RoCE the GID
  // index (RoCE version / address family) is the usual reason.
  bool roce = false;
  size_t ib_hcas = 0;  // most InfiniBand (link layer IB) HCAs one "NET/IB : Using" line lists
  std::optional<std::pair<int64_t, std::string>> qp_unreached;  // line, text
  // GIDs of failed completions ("localGid <gid> remoteGids<gid>", NCCL >= 2.19's
  // net_ib.cc) and the host's own addresses (a pasted `ip addr`): a remote GID
  // that is this host's own is NIC-to-NIC traffic inside one host.
  std::set<std::string> local_gids, host_addrs;
  std::optional<std::pair<int64_t, std::string>> local_peer_failure;  // line, text
  std::vector<std::pair<std::string, std::pair<int64_t, std::string>>> remote_gids;  // gid, (line, text)
  // Communicator identity (NCCL's commId, else its size) by process, and commId by comm pointer.
  std::map<std::string, std::string> current_comm, comm_id_of_ptr;
  // NCCL_DEBUG_SUBSYS=COLL calls per (process, comm pointer): the first
  // kMaxCollOps of each and how far it got, so a rule can line ranks up
  // opCount by opCount (log.coll_calls). Bounded whatever the log's size.
  struct CommCalls {
    LineWho who;
    int64_t lineno = 0;
    std::string text;
    std::string ptr;
    int nranks = 0;
    std::optional<int> rank;
    nlohmann::json ops = nlohmann::json::array();  // [opCount, func, count, datatype, op, root]
    int64_t last_op = -1;
    size_t calls = 0;
  };
  static constexpr size_t kMaxCollOps = 64, kMaxCollComms = 1024;
  // Hashed: a COLL log looks a communicator up on every line, and its ranks'
  // lines interleave, so the last one found rarely serves. (Facts are made in
  // first-line order, not the map's.)
  std::unordered_map<std::string, CommCalls> coll_calls;  // proc|ptr -> calls
  std::string coll_key, last_coll_key;                    // scratch; the key of last_coll
  CommCalls* last_coll = nullptr;                         // a node of coll_calls: stable across rehashing
  std::map<std::string, int> rank_of_ptr;                // proc|ptr -> rank from the init line
  std::set<std::string> gdr_seen;                        // processes that logged GPUDirect RDMA in use
  static std::string proc_key(const LineWho& w) { return w.host + ":" + (w.pid ? std::to_string(*w.pid) : ""); }
  static constexpr size_t kMaxMarkers = 8;
  size_t markers = 0;
  // A collective failed under some rank (a watchdog or gloo timeout, a peer
  // that closed its connection): after that every rank exits with code 1, so
  // exit codes stop saying anything about a bug in the script.
  bool collective_failed = false;
  std::vector<size_t> rank_exits;  // indices of log.rank_exited in set.findings
  nlohmann::json marker_lines = nlohmann::json::array();
  // The line after a Python traceback's frame header ('File "x.py", line 12, in f') is that frame's
  // source code: "raise RuntimeError(...)" or "timeout=timeout" there is context, not a report.
  bool source_line_next = false;

  Subject subject_of(const LineWho& w) {
    Subject s;
    if (!w.host.empty()) last_host = w.host;
    if (!file_host.empty()) s.host = file_host;
    else if (!w.host.empty()) s.host = w.host;
    else if (!last_host.empty()) s.host = last_host;
    if (w.pid) s.pid = *w.pid;
    if (w.dev) s.gpu = *w.dev;
    if (w.rank) s.rank = *w.rank;
    return s;
  }

  void fact(const char* kind, const LineWho& w, int64_t lineno, const std::string& line, nlohmann::json data) {
    Evidence e;
    e.kind = kind;
    e.subject = subject_of(w);
    e.provenance = Provenance{source, lineno, line.substr(0, 300)};
    e.data = std::move(data);
    set.evidence.push_back(std::move(e));
  }

  // The same signal from the same process repeats (a stack trace prints the
  // watchdog frame several times, a retry loop logs each attempt): one
  // finding with a repeat count, not many.
  std::map<std::string, size_t> seen;  // id|host|pid|rank -> index in set.findings
  Finding scratch;

  Finding& finding(const std::string& id, Layer layer, Severity sev, FindingRole role, std::string summary,
                   const LineWho& w, int64_t lineno, const std::string& line) {
    const Subject subj = subject_of(w);
    const std::string key = id + "|" + subj.host.value_or("") + "|" + (subj.pid ? std::to_string(*subj.pid) : "") +
                            "|" + (subj.rank ? std::to_string(*subj.rank) : "");
    if (auto it = seen.find(key); it != seen.end()) {
      Finding& prev = set.findings[it->second];
      prev.fields["repeats"] = prev.fields.value("repeats", 1) + 1;
      // The caller fills fields/supports on what it gets back: give it a
      // scratch copy so the first occurrence keeps its own.
      scratch = Finding{};
      return scratch;
    }
    seen[key] = set.findings.size();
    Finding f;
    f.id = id;
    f.layer = layer;
    f.severity = sev;
    f.role = role;
    f.summary = std::move(summary);
    f.subject = subject_of(w);
    f.provenance.push_back(Provenance{source, lineno, line.substr(0, 300)});
    f.order = lineno;
    set.findings.push_back(std::move(f));
    return set.findings.back();
  }

  // `body`: the line without a launcher's, shipper's or grep's prefix (the
  // patterns anchored at a line's start read it; the rest search `text`).
  // "AllReduce: opCount 3 sendbuff 0x.. recvbuff 0x.. count 1024 datatype 7 op 0 root 0 comm 0x.. [nranks=8] stream 0x.."
  void record_coll_call(const logs::NcclCollLine& call, int64_t lineno, std::string_view text) {
    // proc_key(who_of(text)) + "|" + comm, built in place: a COLL log is
    // millions of these, and who_of is needed only for a new communicator.
    std::string& key = coll_key;
    process_key_of(text, key);
    key.push_back('|');
    key.append(call.comm);
    // One rank's calls come in runs: the map is searched when the comm changes.
    CommCalls* c = nullptr;
    if (last_coll && key == last_coll_key) {
      c = last_coll;
    } else if (auto it = coll_calls.find(key); it != coll_calls.end()) {
      c = &it->second;
    } else if (coll_calls.size() < kMaxCollComms) {
      c = &coll_calls.emplace(key, CommCalls{}).first->second;
      c->who = who_of(text);
      c->lineno = lineno;
      c->text = std::string(text.substr(0, 300));
      c->ptr = std::string(call.comm);
      c->nranks = static_cast<int>(call.nranks);
      if (auto r = rank_of_ptr.find(key); r != rank_of_ptr.end()) c->rank = r->second;
    }
    if (!c) return;
    last_coll_key = key;
    last_coll = c;
    ++c->calls;
    c->last_op = std::max(c->last_op, call.op_count);
    if (c->ops.size() < kMaxCollOps)
      c->ops.push_back({call.op_count, std::string(call.func), call.count, call.datatype, call.redop, call.root});
  }

  // Channel set-up lines: one fact per edge of a communicator, not per
  // channel. NCCL prints the same peer and transport once per channel (32
  // lines of "0[0] -> 1[1] via P2P/IPC" on an H100 node), so each further
  // line only counts toward the first's "channels". Bounded like coll_calls.
  std::unordered_map<std::string, size_t> edge_fact;  // edge key -> index in set.evidence
  std::vector<std::pair<size_t, int64_t>> edge_channels;  // (index in set.evidence, lines)
  std::string edge_key;                                   // scratch
  static constexpr size_t kMaxEdges = 1 << 18;

  void channel_edge(const std::string& text, const LineText& lt, const LineWho& w, int64_t lineno) {
    static const Field edge(" via ", R"((?:Ring|Channel|Tree) \d+\S* ?: (\d+)\[(\d+)\] -> (\d+)\[(\d+)\](?:\s*\[(\w+)\])? via (\S+(?: [A-Za-z]\S*)*))");
    int from_rank, from_dev, to_rank, to_dev;
    std::string dir, transport;
    if (auto e = read_channel_edge_line(text)) {
      from_rank = e->from_rank, from_dev = e->from_dev, to_rank = e->to_rank, to_dev = e->to_dev;
      dir.assign(e->direction);
      transport.assign(e->transport);
    } else {
      std::string g1, g2, g3, g4;
      if (!edge.find(lt, &g1, &g2, &g3, &g4, &dir, &transport)) return;
      from_rank = to_int(g1), from_dev = to_int(g2), to_rank = to_int(g3), to_dev = to_int(g4);
    }
    // A net plugin's name may hold spaces ("via NET/AWS Libfabric/1/GDRDMA/Shared"); Ray's
    // "[repeated 2x across cluster]" after it is not part of the transport.
    if (const size_t rep = transport.find(" [repeated"); rep != std::string::npos) transport.resize(rep);
    const auto comm = current_comm.find(proc_key(w));
    std::string& key = edge_key;
    key = proc_key(w);
    for (int v : {w.rank.value_or(-1), from_rank, from_dev, to_rank, to_dev}) key += '|' + std::to_string(v);
    key += '|' + dir + '|' + transport + '|' + (comm != current_comm.end() ? comm->second : std::string());
    if (auto it = edge_fact.find(key); it != edge_fact.end()) {
      ++edge_channels[it->second].second;
      return;
    }
    nlohmann::json d = {{"from_rank", from_rank}, {"from_dev", from_dev}, {"to_rank", to_rank},
                        {"to_dev", to_dev},       {"transport", transport}};
    if (!dir.empty()) d["direction"] = dir;
    if (comm != current_comm.end()) d["comm"] = comm->second;
    if (edge_fact.size() < kMaxEdges) {
      edge_fact.emplace(key, edge_channels.size());
      edge_channels.emplace_back(set.evidence.size(), 1);
    } else {
      d["channels"] = 1;
    }
    fact("log.channel_edge", w, lineno, text, std::move(d));
  }

  // A line with none of the facts' literals (sieve_literals()): no check
  // can hold on it, so all line() would do is this.
  void quiet() { source_line_next = false; }

  // A NCCL_DEBUG_SUBSYS=COLL line is a structured record and nothing else
  // (a function name, counters, pointers): it is read and the line is done.
  // A COLL log is ~90% such lines, so this is most of `diagnose --log` on one.
  bool coll(std::string_view text, int64_t lineno, size_t& nccl_lines) {
    const size_t at = text.find(": opCount ");
    if (at == std::string_view::npos || text.find("NCCL") == std::string_view::npos) return false;
    auto call = logs::parse_nccl_coll_line(text, at);
    if (!call || call->nranks <= 0) return false;
    ++nccl_lines;
    record_coll_call(*call, lineno, text);
    source_line_next = false;
    return true;
  }

  void line(const std::string& text, std::string_view body, int64_t lineno, size_t& nccl_lines,
            size_t& warn_lines) {
    static const Field version("NCCL version ", R"(NCCL version (\d+\.\d+\.\d+))");
    static const Field env(" set by environment to ", R"((NCCL_[A-Z0-9_]+) set by environment to (\S*))");
    // The address is followed by "<port>"; a pasted log may carry a placeholder ("<ip>") for it.
    static const Field bootstrap("Bootstrap", R"(Bootstrap ?: Using \[?\d*\]?([A-Za-z0-9_.\-]+):(<[a-z]+>|[^\s<]+))");
    static const Field net_ib_dev("", R"(\[\d+\]([A-Za-z0-9_\-]+):(\d+)/(RoCE|IB))");
    static const Field net_socket("NET/Socket", R"(NET/Socket ?: Using \[\d+\]([A-Za-z0-9_.\-]+):)");
    // The address a process advertises on an interface, in every form NCCL
    // has printed it: "Bootstrap : Using eth0:10.0.0.1<0>", "NET/Socket :
    // Using [0]eth0:10.0.0.1<0> [1]eth1:...", "NET/IB : Using [0]mlx5_0:1/IB ;
    // OOB eth0:10.0.0.1<0>" and NCCL 2.3's "NET : Using interface eth1:...<0>".
    // A pasted log may carry a placeholder for the address ("<ipA>").
    static const Field iface_addr("Using", R"((?:Bootstrap ?: Using|NET/Socket ?: Using|NET ?: Using interface|OOB) (?:\[\d+\])?([A-Za-z0-9_.\-]+):(<[A-Za-z0-9_\-]+>|[0-9a-fA-F.:]+)<\d+>)");
    static const RE2 iface_addr_more(R"(\[\d+\]([A-Za-z0-9_.\-]+):(<[A-Za-z0-9_\-]+>|[0-9a-fA-F.:]+)<\d+>)");
    static const Field plugin_loaded("", R"(NET/Plugin ?: (?:Loaded|Plugin name set by env to|Using) (?:net plugin )?'?([A-Za-z0-9_.\-]+))");
    static const Field comm_line("comm 0x", R"(comm (0x[0-9a-f]+) rank (\d+) n[Rr]anks (\d+))");
    static const Field comm_id("commId 0x", R"(commId (0x[0-9a-f]+))");
    static const Field peer("Access Peer", R"(Device=(\d+) (CAN|CANNOT) Access Peer Device=(\d+))");
    static const Field nranks("nranks ", R"(nranks (\d+))");
    static const Field ib_completion("Got completion", R"(NET/IB ?: Got completion (?:from peer (\S+) )?with (?:status=(?:[A-Za-z_ ]+\()?|error )(\d+))");
    static const Field hca("hca ", R"(hca (\S+))");
    static const Field watchdog_fields("SeqNum=", R"(SeqNum=(\d+), OpType=(\w+).*?Timeout\(ms\)=(\d+))");
    static const Field watchdog_numel("NumelIn=", R"(NumelIn=(\d+), NumelOut=(\d+))");
    // "[PG ID 1 PG GUID 1(tp) Rank 3]" (torch >= 2.4), "[PG 1 (tp) Rank 3]" (2.2-2.3).
    static const Field watchdog_pg("[PG ", R"(\[PG (?:ID )?(\d+))");
    // The check prints the reporting rank's fingerprint, then the first rank whose fingerprint differs.
    static const Field mismatch_fields("CollectiveFingerPrint", R"(Rank (\d+) is running collective: CollectiveFingerPrint\(SequenceNumber=(\d+), OpType=(\w+)(?:.*?but Rank (\d+) is running collective)?)");
    static const Field tr_rank("local_rank", R"(^\s*rank\s*:\s*(\d+) \(local_rank)");
    static const Field tr_host("host", R"(^\s*host\s*:\s*(\S+))");
    static const Field tr_exit("exitcode", R"(^\s*exitcode\s*:\s*(-?\d+))");
    static const Field tr_signal("received by PID", R"(Signal (\d+) \((SIG\w+)\) received by PID (\d+))");
    // DeepSpeed's launcher (launch.py sigkill_handler): "[...] exits with return code = -7", Python's
    // convention of -N for a child killed by signal N.
    static const Field ds_exit("exits with return code", R"(exits with return code = (-?\d+))");
    static const Field py_exc("", R"(^(?:\[[^\]]*\]:?\s*)*([A-Za-z_][\w.]*(?:Error|Exception)): (.+))");
    static const Field timeout_ms("Timeout(ms)=", R"(Timeout\(ms\)=(\d+))");
    static const Field ibv_call(" failed", R"((ibv_\w+) failed)");
    // A c10d store client that could not reach MASTER_ADDR:MASTER_PORT (torch's socket.cpp and
    // TCPStore.cpp): "The client socket has timed out after 20000ms while trying to connect to
    // (127.0.0.1, 29622).", "... has failed to connect to [localhost]:29500 (errno: 111 ...)",
    // "TCP client failed to connect/validate to host 127.0.0.1:29622 - retrying".
    static const Field store_connect_tuple("client socket", R"(client socket has .*?connect.*?\(([^\s,()]+), (\d+)\))");
    static const Field store_connect_bracket("client socket", R"(client socket has failed to connect to \[([^\]]+)\]:(\d+))");
    static const Field store_connect_host("TCP client", R"(TCP client failed to connect/validate to host \[?([^\s\]]+?)\]?:(\d+))");

    if (coll(text, lineno, nccl_lines)) return;
    const LineWho w = who_of(text);
    const LineText lt(text);
    const bool is_nccl = lt.has("NCCL");
    if (is_nccl) ++nccl_lines;
    std::string g1, g2, g3, g4, g5;

    // ---- structural facts ----
    if (version.find(lt, &g1)) fact("log.nccl_version", w, lineno, text, {{"version", g1}});
    if (env.find(lt, &g1, &g2)) fact("log.nccl_env", w, lineno, text, {{"name", g1}, {"value", g2}});
    if (bootstrap.find(lt, &g1, &g2)) fact("log.bootstrap", w, lineno, text, {{"ifname", g1}, {"addr", g2}});
    if (lt.has("NET/IB") && lt.has("Using")) {
      nlohmann::json devs = nlohmann::json::array();
      re2::StringPiece rest(text);
      while (RE2::FindAndConsume(&rest, net_ib_dev.re(), &g1, &g2, &g3))
        devs.push_back({{"nic", g1}, {"port", to_int(g2)}, {"link", g3}});
      if (!devs.empty()) fact("log.net_ib", w, lineno, text, {{"devices", devs}});
    }
    if (net_socket.find(lt, &g1)) fact("log.net_socket", w, lineno, text, {{"ifname", g1}});
    if (iface_addr.find(lt, &g1, &g2)) {
      fact("log.iface_addr", w, lineno, text, {{"ifname", g1}, {"addr", g2}});
      // NET/Socket lists every interface it uses: "[0]eth0:a<0> [1]eth1:b<0>".
      if (lt.has("NET/Socket")) {
        re2::StringPiece rest(text);
        bool first = true;
        while (RE2::FindAndConsume(&rest, iface_addr_more, &g1, &g2))
          if (!std::exchange(first, false)) fact("log.iface_addr", w, lineno, text, {{"ifname", g1}, {"addr", g2}});
      }
    }
    if (lt.has("NET/Plugin")) {
      if (lt.has("No plugin found")) fact("log.net_plugin", w, lineno, text, {{"state", "none"}, {"name", ""}});
      else if (plugin_loaded.find(lt, &g1))
        fact("log.net_plugin", w, lineno, text, {{"state", "loaded"}, {"name", g1}});
    }
    // The comm whose set-up lines come now, per process: channel lines carry
    // the comm's own ranks, so the rules keep communicators apart.
    if (comm_line.find(lt, &g1, &g2, &g3)) {
      rank_of_ptr[proc_key(w) + "|" + g1] = to_int(g2);
      std::string id;
      if (comm_id.find(lt, &id)) comm_id_of_ptr[g1] = id;
      else if (auto it = comm_id_of_ptr.find(g1); it != comm_id_of_ptr.end()) id = it->second;
      current_comm[proc_key(w)] = !id.empty() ? id : "nranks:" + g3;
    }
    if (store_connect_tuple.find(lt, &g1, &g2) || store_connect_bracket.find(lt, &g1, &g2) ||
        store_connect_host.find(lt, &g1, &g2))
      fact("log.store_connect_failed", w, lineno, text, {{"addr", g1}, {"port", to_int(g2)}});
    if (lt.has(" via ")) channel_edge(text, lt, w, lineno);
    if (peer.find(lt, &g1, &g2, &g3))
      fact("log.peer_access", w, lineno, text, {{"from_dev", to_int(g1)}, {"to_dev", to_int(g3)}, {"can", g2 == "CAN"}});
    if (is_nccl && nranks.find(lt, &g1))
      fact("log.init", w, lineno, text, {{"what", "nranks"}, {"nranks", to_int(g1)}});
    else if (lt.has("Init COMPLETE") || lt.has("Setting affinity") || lt.has("Connected all rings") ||
             lt.has("# Using devices"))
      fact("log.init", w, lineno, text, {{"what", "init"}});
    // NCCL saying GPUDirect RDMA works: "Connected all rings, use ring PXN 0 GDR 1" (2.19+),
    // "GPU Direct RDMA Enabled for HCA 0 'mlx5_0'" (net_ib.cc). Once per process.
    if (is_nccl && ((lt.has("GDR 1") && lt.has("Connected all rings")) || lt.has("GPU Direct RDMA Enabled")) &&
        gdr_seen.insert(proc_key(w)).second)
      fact("log.gdr_in_use", w, lineno, text, {{"process", proc_key(w)}});
    if (lt.has("Avg bus bandwidth") || lt.has("Out of bounds values"))
      fact("log.init", w, lineno, text, {{"what", "results"}});

    if (lt.has("NCCL WARN")) {
      ++warn_lines;
      const auto pos = text.find("NCCL WARN");
      fact("log.warn", w, lineno, text, {{"text", text.substr(pos + 10, 240)}});
    }

    // ---- torchrun failure block ----
    if (tr_rank.find(body, &g1)) pending_rank = to_int(g1);
    if (tr_host.find(body, &g1)) pending_host = g1;
    // A launcher's report of how a rank's process ended: -N is signal N.
    auto rank_ended = [&](int code, const LineWho& ww) {
      if (code < 0) {
        const char* name = linux_signal_name(-code);
        const std::string named = *name ? std::string(" (") + name + ")" : "";
        auto& f = finding("log.rank_killed", Layer::framework, Severity::critical, FindingRole::primary,
                          "rank process killed by signal " + std::to_string(-code) + named, ww, lineno, text);
        f.fields = {{"exitcode", code}};
        if (*name) f.fields["signal"] = name;
        f.supports.push_back({"rank_process_died", 30});
        // SIGBUS, as the "sigbus" cue reads it from a message: a mapped /dev/shm segment the tmpfs could
        // not back.
        if (-code == 7) f.supports.push_back({"container_shm_too_small", 25});
      } else if (code > 0) {
        const size_t before = set.findings.size();
        auto& f = finding("log.rank_exited", Layer::framework, Severity::error, FindingRole::primary,
                          "rank process exited with code " + std::to_string(code), ww, lineno, text);
        if (set.findings.size() > before) rank_exits.push_back(before);
        f.fields = {{"exitcode", code}};
        // exit 1 is what an uncaught Python exception gives: a weak vote for a
        // bug in the script; the traceback decides.
        f.supports.push_back({"user_code_bug", 3});
        f.supports.push_back({"rank_process_died", 2});
      }
    };
    if (tr_exit.find(body, &g1)) {
      LineWho ww = w;
      if (pending_rank) ww.rank = *pending_rank;
      if (file_host.empty() && !pending_host.empty()) ww.host = pending_host;
      rank_ended(to_int(g1), ww);
      pending_rank.reset();
      pending_host.clear();
    }
    if (ds_exit.find(lt, &g1)) rank_ended(to_int(g1), w);
    if (tr_signal.find(lt, &g1, &g2, &g3)) {
      auto& f = finding("log.rank_killed", Layer::framework, Severity::critical, FindingRole::primary,
                        "rank process received " + g2, w, lineno, text);
      f.subject.pid = to_i64(g3);
      f.fields = {{"signal", g2}};
      f.supports.push_back({"rank_process_died", 30});
    }

    // ---- mechanism signals ----
    static const std::vector<Signal>& table = signals();
    thread_local std::vector<uint64_t> open;
    signal_gate().candidates(text, open);
    for (size_t si = 0; si < table.size(); ++si) {
      const Signal& s = table[si];
      if (!LiteralGate::test(open, si) || !signal_matches(s, lt)) continue;
      auto& f = finding(std::string("log.") + s.id, s.layer, s.severity, s.role, s.summary, w, lineno, text);
      f.supports = s.supports;
      if (std::string_view(s.id) == "watchdog_timeout") {
        if (watchdog_fields.find(lt, &g1, &g2, &g3)) {
          f.fields = {{"seq", to_i64(g1)}, {"op", g2}, {"timeout_ms", to_i64(g3)}};
          f.subject.seq = to_i64(g1);
          if (watchdog_numel.find(lt, &g1, &g2)) {
            f.fields["numel_in"] = to_i64(g1);
            f.fields["numel_out"] = to_i64(g2);
          }
          if (watchdog_pg.find(lt, &g1)) f.subject.process_group = g1;
        } else if (timeout_ms.find(lt, &g1)) {
          f.fields = {{"timeout_ms", to_i64(g1)}};
        }
      } else if (std::string_view(s.id) == "collective_mismatch" && mismatch_fields.find(lt, &g1, &g2, &g3, &g4)) {
        f.fields = {{"rank", to_int(g1)}, {"seq", to_i64(g2)}, {"op", g3}};
        if (!g4.empty() && g4.size() < 9) f.fields["other_rank"] = to_int(g4);
        f.subject.seq = to_i64(g2);
      } else if (std::string_view(s.id) == "ibv_enodev" || std::string_view(s.id) == "ibv_unreachable") {
        if (ibv_call.find(lt, &g1)) f.fields = {{"call", g1}};
      }
    }
    if (ib_completion.find(lt, &g1, &g2)) {
      const std::string peer_nic = g1;
      const int status = to_int(g2);
      const bool flush = status == 5;  // IBV_WC_WR_FLUSH_ERR: the QP was already in error
      auto& f = finding(flush ? "log.ib_completion_flushed" : "log.ib_completion_error", Layer::transport,
                        flush ? Severity::warning : Severity::error, flush ? FindingRole::cascade : FindingRole::primary,
                        "IB completion error status " + std::to_string(status) +
                            (!peer_nic.empty() ? " from peer " + peer_nic : std::string()),
                        w, lineno, text);
      f.fields = {{"status", status}};
      if (!peer_nic.empty()) f.fields["peer"] = peer_nic;
      if (hca.find(lt, &g1)) f.subject.nic = g1;
      if (status == 12) {  // IBV_WC_RETRY_EXC_ERR: the peer NIC never acknowledged
        f.supports = {{"ib_transport_retry_exceeded", 30}, {"nic_link_flapping", 3}, {"nic_pair_unreachable", 3},
                      {"roce_gid_index_mismatch", 2}};
      } else if (status == 13) {  // IBV_WC_RNR_RETRY_EXC_ERR
        f.supports = {{"qp_error_state", 8}, {"ib_transport_retry_exceeded", 3}};
      } else if (status == 4) {  // IBV_WC_LOC_PROT_ERR: the HCA may not touch the registered buffer
        f.supports = {{"pcie_acs_p2p_blocked", 8}, {"gpudirect_rdma_module_missing", 6}, {"iommu_blocks_p2p", 4}};
      } else if (!flush) {  // remote protection, access, operation errors
        f.supports = {{"qp_error_state", 10}};
      }
    }
    if (is_nccl && lt.has("remoteGid")) {
      static const Field gids("remoteGid", R"(localGid ([0-9a-fA-F:.]+) remoteGids? ?([0-9a-fA-F:.]+))");
      if (gids.find(lt, &g1, &g2)) {
        // RoCE v2 IPv4 GIDs print as IPv4-mapped IPv6; `ip addr` shows the IPv4 address.
        for (auto* g : {&g1, &g2})
          if (g->rfind("::ffff:", 0) == 0 && g->find('.') != std::string::npos) g->erase(0, 7);
        local_gids.insert(g1);
        if (remote_gids.size() < 64) remote_gids.push_back({g2, {lineno, text.substr(0, 300)}});
      }
    }
    // `ip addr`'s address lines start with "inet" / "inet6" after their indentation.
    if (const size_t at = body.find_first_not_of(" \t"); at != std::string_view::npos && body.substr(at, 4) == "inet") {
      static const Field addr("inet", R"(^\s*inet6? ([0-9a-fA-F:.]+)/\d+)");
      if (host_addrs.size() < 256 && addr.find(body, &g1)) host_addrs.insert(g1);
    }
    if (lt.has("/RoCE") || lt.has("RoCE v2") || lt.has("RoCE V2") ||
        (lt.has("link_layer") && lt.has("Ethernet")))
      roce = true;
    if (lt.has("NET/IB : Using")) {
      size_t n = 0;
      for (size_t p = text.find("/IB", text.find("Using")); p != std::string::npos; p = text.find("/IB", p + 3)) ++n;
      ib_hcas = std::max(ib_hcas, n);
    }
    if (!qp_unreached && (lt.has("IBV_WC_RETRY_EXC_ERR") || lt.has("with status=12") ||
                          lt.has("with error 12") || (lt.has("ibv_modify_qp") && lt.has("timed out"))))
      qp_unreached = std::make_pair(lineno, text.substr(0, 300));
    if (lt.has("Watchdog caught collective operation timeout") || lt.has("Connection closed by peer") ||
        (lt.has("gloo") && (lt.has("Timed out waiting") || lt.has("timed out") || lt.has("Timeout waiting"))))
      collective_failed = true;
    for (auto& c : line_cues(lt)) {
      auto& f = finding("log.cue." + c.id, c.layer, c.severity, c.role, c.summary, w, lineno, text);
      f.supports = std::move(c.supports);
      f.fields = {{"subsystem", c.subsystem}, {"cue", true}};
    }
    const bool source_line = source_line_next;
    source_line_next = lt.has("File \"") && lt.has("\", line ");
    if (!source_line && is_failure_marker(lt)) {
      ++markers;
      if (marker_lines.size() < kMaxMarkers)
        marker_lines.push_back({{"source", source}, {"line", lineno}, {"text", text.substr(0, 240)}});
    }
    if (!source_line && (lt.has("Error: ") || lt.has("Exception: ")) && py_exc.find(body, &g1, &g2) &&
        !is_distributed_exception(lt)) {
      auto& f = finding("log.python_exception", Layer::framework, Severity::error, FindingRole::primary,
                        "uncaught " + g1 + " in the training script", w, lineno, text);
      f.fields = {{"exception", g1}, {"message", g2.substr(0, 200)}};
      f.supports.push_back({"user_code_bug", 20});
    }
  }
};

}  // namespace

// The line without the prefix a launcher, a log shipper, grep -r or a
// Markdown quote put in front of it, keeping the indentation after that
// prefix (py-spy's frames are the indented lines). `body` is where
// logs::parse_line_prefix found the prefixes end.
static std::string_view without_prefix(std::string_view line, std::string_view body) {
  if (body.data() < line.data() || body.data() + body.size() > line.data() + line.size()) return line;
  size_t start = static_cast<size_t>(body.data() - line.data());
  while (start > 0 && (line[start - 1] == ' ' || line[start - 1] == '\t')) --start;
  return line.substr(start, static_cast<size_t>(body.data() + body.size() - (line.data() + start)));
}

struct LogFactExtractor::Impl {
  std::string source, host;
  Extractor ex;
  PastedBlocks blocks;
  int64_t lineno = 0;
  size_t nccl_lines = 0, warn_lines = 0;
  size_t sieve_from;
  std::vector<uint8_t> marks;  // of the block being read: kFactMark | kBlockMark | kCrashMark per line
  std::string line_buf;
  Impl(const std::string& s, const std::string& h, EvidenceSet& set, size_t from)
      : source(s), host(h), ex{source, host, set, std::nullopt, {}, {}, {}, {}, {}, {}, {}, {}}, sieve_from(from) {}
  void line(std::string_view raw, uint8_t mark);
};

LogFactExtractor::LogFactExtractor(const std::string& source, const std::string& host, EvidenceSet& set,
                                   size_t sieve_from)
    : impl_(std::make_unique<Impl>(source, host, set, sieve_from)) {}

LogFactExtractor::~LogFactExtractor() = default;

constexpr uint8_t kUnsieved = kFactMark | kBlockMark | kCrashMark | kNcclMark;

void LogFactExtractor::line(std::string_view raw) { impl_->line(raw, kUnsieved); }

const LineSieve& LogFactExtractor::sieve() {
  static const LineSieve& sieve = *new LineSieve(sieve_literals());  // never destroyed, as signal_gate()
  return sieve;
}

std::vector<std::pair<std::string, const LiteralDatabase*>> LogFactExtractor::literal_databases() {
  return {{"sieve", &sieve()}, {"signals", &signal_gate()}, {"cues", &cue_gate()}};
}

void LogFactExtractor::lines(std::string_view block) {
  // The sieve is made on the first large block, once per process.
  const bool sieved = block.size() >= impl_->sieve_from && sieve().mark_lines(block, impl_->marks);
  for (size_t k = 0; !block.empty(); ++k) {
    const size_t nl = block.find('\n');
    impl_->line(block.substr(0, nl), sieved ? impl_->marks[k] : kUnsieved);
    block = nl == std::string_view::npos ? std::string_view{} : block.substr(nl + 1);
  }
}

void LogFactExtractor::Impl::line(std::string_view raw, uint8_t mark) {
  ++lineno;
  while (!raw.empty() && (raw.back() == '\r' || raw.back() == '\n')) raw.remove_suffix(1);
  // A carriage return inside a line is a terminal redraw (tqdm): what the
  // terminal finally showed is the text after the last one (as the analyser reads it).
  // (memrchr: string_view::rfind is a byte loop, and this is every line.)
  if (const void* cr = memrchr(raw.data(), '\r', raw.size()))
    raw.remove_prefix(static_cast<size_t>(static_cast<const char*>(cr) - raw.data()) + 1);
  if (raw.empty()) return;
  // No pasted block open and none can start here: the block reader would do nothing with the line.
  const bool block_quiet = !(mark & kBlockMark) && blocks.idle();
  if (!(mark & kFactMark) && block_quiet) {
    // None of the literals of a check either: most lines of a large log,
    // done without copying or parsing them. An NCCL line is counted as
    // Extractor::line counts it: on the line cut at kMaxLine and after its
    // last '\r' (the sieve's mark is of the whole line).
    if ((mark & kNcclMark) && contains(raw.substr(0, kMaxLine), "NCCL")) ++nccl_lines;
    ex.quiet();
    return;
  }
  const std::string_view cut = raw.substr(0, kMaxLine);
  const bool ansi = std::memchr(cut.data(), '\x1b', cut.size()) != nullptr;
  try {
    // A COLL record needs no prefix parsed (nor anything else), and no copy.
    if (block_quiet && !ansi && ex.coll(cut, lineno, nccl_lines)) return;
  } catch (const std::exception&) {
    return;  // as below: one bad line is skipped
  }
  // The line buffer is reused: no allocation per line.
  std::string& line = line_buf;
  line.assign(cut.data(), cut.size());
  if (ansi) logs::strip_ansi(line);
  try {
    if (block_quiet && ansi && ex.coll(line, lineno, nccl_lines)) return;
    // A pasted block (a stack, a bandwidth matrix, setpci output) is read in
    // its columns, and a few patterns are anchored at the line's start: both
    // without the prefix a launcher, a log shipper, grep -r or a Markdown
    // quote put in front of every line.
    // One parse serves both: the body is where the prefixes end, the pasted
    // text keeps the indentation before it.
    const std::string_view body = logs::parse_line_prefix(line).body;
    const std::string_view pasted = without_prefix(line, body);
    if (mark & kFactMark) {
      ex.line(line, body, lineno, nccl_lines, warn_lines);
    } else {
      if ((mark & kNcclMark) && contains(line, "NCCL")) ++nccl_lines;
      ex.quiet();
    }
    // A fact line that cannot open a block, none being open, changes no block
    // (PastedBlocks::idle()): the crash reader's marker search on every NCCL
    // INFO line was a tenth of a realistic log's reading.
    if (!block_quiet) blocks.line(pasted, lineno, (mark & kCrashMark) != 0);
  } catch (const std::exception&) {
    // A number can overflow stoi: one bad line is skipped, never fatal.
  }
}

void LogFactExtractor::finish() {
  for (const auto& [index, lines] : impl_->ex.edge_channels) impl_->ex.set.evidence[index].data["channels"] = lines;
  Evidence e;
  e.kind = "log.facts_summary";
  if (!impl_->host.empty()) e.subject.host = impl_->host;
  e.provenance.source = impl_->source;
  e.data = {{"lines", impl_->lineno}, {"nccl_lines", impl_->nccl_lines}, {"warn_lines", impl_->warn_lines}};
  impl_->ex.set.evidence.push_back(std::move(e));
  impl_->blocks.finish(impl_->source, impl_->host, impl_->ex.set, impl_->nccl_lines > 0);
  if (impl_->ex.collective_failed)
    for (size_t i : impl_->ex.rank_exits) {
      Finding& f = impl_->ex.set.findings[i];
      f.supports.clear();
      f.role = FindingRole::cascade;
      f.caused_by = "the collective failure these logs show (every rank raises after it)";
    }
  for (const auto& [gid, where] : impl_->ex.remote_gids) {
    if (!impl_->ex.local_gids.count(gid) && !impl_->ex.host_addrs.count(gid)) continue;
    // The QP's far end is a GID of this host: traffic between two NICs (or
    // two VFs of one NIC) of the same machine, which a switch must hairpin
    // and SR-IOV / rail layouts often cannot deliver, while other pairs work.
    Finding f;
    f.id = "log.ib_peer_on_same_host";
    f.layer = Layer::transport;
    f.severity = Severity::error;
    f.role = FindingRole::primary;
    f.summary = "an RDMA completion failed between two NICs of the same host (remote GID " + gid +
                " is this host's own): intra-node NIC-to-NIC traffic does not get through";
    if (!impl_->host.empty()) f.subject.host = impl_->host;
    f.provenance.push_back(Provenance{impl_->source, std::nullopt, where.second});
    f.order = where.first;
    f.fields = {{"remote_gid", gid}};
    f.supports = {{"nic_pair_unreachable", 60}};
    impl_->ex.set.findings.push_back(std::move(f));
    break;
  }
  if (impl_->ex.roce && impl_->ex.qp_unreached) {
    Finding f;
    f.id = "log.roce_qp_unreached";
    f.layer = Layer::transport;
    f.severity = Severity::error;
    f.role = FindingRole::primary;
    f.summary = "a queue pair could not reach its peer on a RoCE fabric: the GID index (RoCE version, IPv4 vs "
                "IPv6 GID) is the usual reason";
    if (!impl_->host.empty()) f.subject.host = impl_->host;
    // No line number: the finding rests on two lines (RoCE in use, the QP failure), so it is its own
    // evidence key rather than shadowed by the catalogue finding on the failure line.
    f.provenance.push_back(Provenance{impl_->source, std::nullopt, impl_->ex.qp_unreached->second});
    f.order = impl_->ex.qp_unreached->first;
    // On RoCE a QP that never reaches RTR/RTS is the GID (RoCE version, IPv6 link-local vs IPv4) far more
    // often than a rail without a route: the GID was the established cause in the corpus's RoCE cases.
    f.supports = {{"roce_gid_index_mismatch", 40}, {"mtu_mismatch", 2}, {"nic_pair_unreachable", 0.5}};
    impl_->ex.set.findings.push_back(std::move(f));
  }
  if (!impl_->ex.roce && impl_->ex.ib_hcas > 0 && impl_->ex.qp_unreached) {
    // The same failure on an InfiniBand fabric: no GID to get wrong, and the
    // subnet manager routes every port it knows. With several HCAs (rails)
    // in use, a peer NIC that never acknowledges is most often one HCA pair
    // with no path between them (rails on separate fabrics, an uncabled or
    // isolated port); with one HCA it may as well be that port or its link.
    const bool rails = impl_->ex.ib_hcas >= 2;
    Finding f;
    f.id = "log.ib_qp_unreached";
    f.layer = Layer::transport;
    f.severity = Severity::error;
    f.role = FindingRole::primary;
    f.summary = "a queue pair could not reach its peer on an InfiniBand fabric with " +
                std::to_string(impl_->ex.ib_hcas) + " HCA(s) in use" +
                (rails ? ": some HCA pair has no path between them (separate rails or fabrics, an isolated port)"
                       : ": that port, its link or its peer");
    if (!impl_->host.empty()) f.subject.host = impl_->host;
    f.provenance.push_back(Provenance{impl_->source, std::nullopt, impl_->ex.qp_unreached->second});
    f.order = impl_->ex.qp_unreached->first;
    f.fields = {{"hcas", impl_->ex.ib_hcas}};
    f.supports = rails ? std::vector<CauseSupport>{{"nic_pair_unreachable", 8}, {"unusable_hca_selected", 3}}
                       : std::vector<CauseSupport>{{"unusable_hca_selected", 2}, {"nic_link_flapping", 2}};
    impl_->ex.set.findings.push_back(std::move(f));
  }
  {
    // Communicators by process in first-seen order: where NCCL printed no
    // commId, the k-th communicator of a size in each process stands for it.
    auto& ex = impl_->ex;
    std::map<std::string, int> kth;  // proc|nranks -> communicators seen
    std::vector<const Extractor::CommCalls*> order;
    for (const auto& [key, c] : ex.coll_calls) order.push_back(&c);
    std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->lineno < b->lineno; });
    for (const auto* c : order) {
      const std::string proc = Extractor::proc_key(c->who);
      std::string comm;
      if (auto id = ex.comm_id_of_ptr.find(c->ptr); id != ex.comm_id_of_ptr.end()) comm = id->second;
      else comm = "nranks:" + std::to_string(c->nranks) + "#" + std::to_string(kth[proc + "|" + std::to_string(c->nranks)]++);
      nlohmann::json d = {{"comm", comm},         {"ptr", c->ptr},      {"nranks", c->nranks},
                          {"ops", c->ops},        {"last_op", c->last_op}, {"calls", c->calls}};
      if (c->rank) d["rank"] = *c->rank;
      else if (c->who.dev) d["dev"] = *c->who.dev;
      ex.fact("log.coll_calls", c->who, c->lineno, c->text, std::move(d));
    }
  }
  if (impl_->ex.markers > 0) {
    Evidence m;
    m.kind = "log.failure_markers";
    if (!impl_->host.empty()) m.subject.host = impl_->host;
    m.provenance.source = impl_->source;
    m.data = {{"count", impl_->ex.markers}, {"lines", impl_->ex.marker_lines}};
    impl_->ex.set.evidence.push_back(std::move(m));
  }
}

void extract_log_facts(std::string_view text, const std::string& source, const std::string& host, EvidenceSet& set,
                       size_t sieve_from) {
  LogFactExtractor x(source, host, set, sieve_from);
  x.lines(text);
  x.finish();
}

}  // namespace ccdiag
