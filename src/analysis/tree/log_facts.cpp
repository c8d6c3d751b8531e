#include "analysis/tree/log_facts.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>

#include "analysis/tree/log_cues.hpp"
#include "analysis/tree/pasted_blocks.hpp"

namespace ccdiag {

namespace {

constexpr size_t kMaxLine = 8192;  // std::regex recursion grows with input; real lines are far shorter

bool has(std::string_view s, std::string_view needle) { return s.find(needle) != std::string_view::npos; }

// What the line's prefixes say about who wrote it.
struct LineWho {
  std::string host;
  std::optional<int64_t> pid;
  std::optional<std::string> dev;  // CUDA device ordinal in "[3]"
  std::optional<int> rank;
};

// NCCL prefix "host:pid:tid [dev] ", possibly after "[time] " or a torchrun
// "[trainer3]:" / "[default0]:" tag; PyTorch's "[rank3]:" / "[Rank 3]"; the
// torchrun "[role<local>|<rank>]:" tag.
LineWho who_of(const std::string& line) {
  static const std::regex nccl_prefix(R"(([^\s:\[\]]+):(\d+):(\d+) \[(\d+)\] )");
  static const std::regex rank_tag(R"(\[(?:rank|Rank )(\d+)\])");
  static const std::regex role_tag(R"(^\[[A-Za-z_]*\d+\|(\d+)\]:)");
  LineWho w;
  std::smatch m;
  if (std::regex_search(line, m, nccl_prefix) && m.position(0) < 64) {
    w.host = m[1].str();
    w.pid = std::stoll(m[2].str());
    w.dev = m[4].str();
  }
  if (std::regex_search(line, m, role_tag)) w.rank = std::stoi(m[1].str());
  else if (std::regex_search(line, m, rank_tag) && m.position(0) < 64) w.rank = std::stoi(m[1].str());
  return w;
}

struct Signal {
  const char* id;                       // finding id suffix: "log.<id>"
  std::vector<const char*> all;         // every substring must occur
  std::vector<const char*> any;         // at least one must occur (when non-empty)
  std::vector<const char*> none;        // none may occur
  Layer layer;
  Severity severity;
  FindingRole role;
  const char* summary;
  std::vector<CauseSupport> supports;
  std::vector<const char*> any2 = {};   // and at least one of these (when non-empty)
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
      {"ib_reg_mr_failed", {"ibv_reg_mr"}, {"failed", "Cannot allocate memory"}, {"Bad address"}, L::transport, S::error,
       R::primary, "memory registration with the HCA failed",
       {{"memlock_limit_too_low", 12}, {"gpudirect_rdma_module_missing", 3}}},
      {"ib_reg_mr_bad_address", {"ibv_reg_mr", "Bad address"}, {}, {}, L::transport, S::error, R::primary,
       "registering GPU memory with the HCA failed (EFAULT): no GPUDirect RDMA peer-memory support",
       {{"gpudirect_rdma_module_missing", 100}}},
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
      {"cuda_oom", {}, {"CUDA out of memory", "OutOfMemoryError", "Cuda failure 'out of memory'",
                        "cudaErrorMemoryAllocation"},
       {}, L::framework, S::error, R::primary, "a rank ran out of GPU memory", {{"gpu_memory_exhausted", 100}}},
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
      {"connect_timeout", {}, {"Connection timed out", "No route to host"}, {"bootstrap", "Bootstrap", "TCPStore", "ibv_"},
       L::transport, S::error, R::primary, "a TCP connection to a peer timed out (packets dropped on the way)",
       {{"firewall_blocked_ports", 10}, {"socket_connection_failure", 6}}},
      {"bootstrap_failed", {}, {"bootstrap", "Bootstrap", "TCPStore", "DistNetworkError", "rendezvous"},
       {"Bootstrap : Using", "NCCL INFO", "bootstrapSplit"}, L::transport, S::error, R::primary,
       "ranks could not reach the rendezvous / bootstrap root",
       {{"bootstrap_unreachable", 40}, {"firewall_blocked_ports", 2}, {"hostname_resolves_to_loopback", 2}},
       {"timed out", "Timed out", "timeout", "Timeout", "failed", "Failed", "refused", "unreachable"}},
      {"bootstrap_loopback", {"Bootstrap : Using"}, {"lo:", "127.0."}, {}, L::system_config, S::warning, R::primary,
       "NCCL bootstraps on the loopback interface", {{"hostname_resolves_to_loopback", 80}}},
      {"duplicate_gpu", {}, {"Duplicate GPU detected", "same CUDA device", "both on CUDA device"}, {}, L::framework,
       S::error, R::primary, "two ranks use the same GPU", {{"wrong_device_binding", 60}}},
      {"nccl_version_mismatch", {}, {"NCCL version mismatch", "Mismatched NCCL version", "nccl version mismatch"}, {},
       L::nccl, S::error, R::primary, "NCCL reported different versions across ranks", {{"nccl_version_mismatch", 200}}},
      {"net_plugin_failed", {}, {"Failed to initialize any NET plugin", "NET/Plugin: Failed", "NET/Plugin : Failed",
                                 "NET/Plugin: Could not", "incompatible", "NET/Plugin : Plugin load returned"},
       {"No plugin found"}, L::nccl, S::error, R::primary, "the NCCL network plugin failed to load or initialise",
       {{"net_plugin_mismatch", 150}}},
      {"nvls_failed", {}, {"NVLS", "NVLink SHARP"}, {"NCCL INFO"}, L::nccl, S::error, R::primary,
       "NVLink SHARP (NVLS) setup failed", {{"nvls_path_failure", 200}, {"fabric_manager_state", 5}},
       {"Failed", "failed", "error", "Error"}},
      {"no_algorithm", {}, {"no algorithm/protocol available", "No algorithm/protocol available"}, {}, L::nccl,
       S::error, R::primary, "NCCL_ALGO/NCCL_PROTO settings leave no usable algorithm", {{"nccl_config_error", 200}}},
      {"invalid_nccl_env", {"NCCL WARN", "NCCL_"}, {"Invalid", "invalid", "Unknown", "unknown", "Ignoring"}, {},
       L::nccl, S::warning, R::primary, "NCCL rejected an NCCL_* setting", {{"nccl_config_error", 20}}},
      {"stream_capture", {}, {"stream is capturing", "cudaErrorStreamCapture", "capture was invalidated",
                              "operation not permitted when stream is capturing"},
       {}, L::nccl, S::error, R::primary, "a CUDA graph capture or stream misuse broke a collective",
       {{"cuda_graph_or_stream_misuse", 300}}},
      {"topology_path", {}, {"Could not find real path for", "topo.cc"}, {"NCCL INFO"}, L::hardware, S::warning,
       R::primary, "NCCL could not map a device into the PCI topology", {{"pcie_topology_misdetected", 80}},
       {"WARN", "Could not find real path"}},
      {"system_not_ready", {}, {"system not yet initialized", "cudaErrorSystemNotReady"}, {}, L::system_config,
       S::error, R::primary, "CUDA reports the system is not initialised (NVSwitch fabric not up)",
       {{"fabric_manager_not_running", 150}, {"fabric_manager_state", 8}}},
      {"driver_library_mismatch", {}, {"Driver/library version mismatch", "driver version is insufficient",
                                       "CUDA driver version is insufficient"},
       {}, L::system_config, S::error, R::primary, "the NVIDIA user-space library and kernel driver disagree",
       {{"driver_library_mismatch", 200}}},
      {"oom_killer", {"Out of memory: Killed process"}, {}, {}, L::framework, S::critical, R::primary,
       "the kernel OOM killer killed a process", {{"rank_process_died", 30}}},
      {"nvlink_inactive", {"NVLink"}, {"inactive", "Inactive", "is down", "link down"}, {}, L::hardware, S::warning,
       R::primary, "an NVLink link is inactive", {{"nvlink_down_or_degraded", 10}}},
  };
  return table;
}

bool signal_matches(const Signal& s, std::string_view line) {
  for (const char* a : s.all)
    if (!has(line, a)) return false;
  if (!s.any.empty() && std::none_of(s.any.begin(), s.any.end(), [&](const char* a) { return has(line, a); }))
    return false;
  for (const char* n : s.none)
    if (has(line, n)) return false;
  if (!s.any2.empty() && std::none_of(s.any2.begin(), s.any2.end(), [&](const char* a) { return has(line, a); }))
    return false;
  return true;
}

// Exceptions that are the distributed machinery reporting someone else's
// failure; a user bug is any other exception type.
bool is_distributed_exception(std::string_view line) {
  for (const char* k : {"NCCL", "nccl", "DistBackendError", "DistError", "DistNetworkError", "DistStoreError",
                        "collective", "Watchdog", "timeout", "Timeout", "Connection", "CUDA", "cuda",
                        "ChildFailedError", "mismatch", "ProcessGroup", "SignalException", "KeyboardInterrupt",
                        // Exceptions about a host resource are the system's, not the script's.
                        "shared memory", "/dev/shm", "Gloo", "gloo", "socket", "resolve", "hostname",
                        "Address already in use", "Permission denied", "Timed out"})
    if (has(line, k)) return true;
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
  std::optional<std::pair<int64_t, std::string>> qp_unreached;  // line, text
  static constexpr size_t kMaxMarkers = 8;
  size_t markers = 0;
  nlohmann::json marker_lines = nlohmann::json::array();

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

  void line(const std::string& text, int64_t lineno, size_t& nccl_lines, size_t& warn_lines) {
    static const std::regex version(R"(NCCL version (\d+\.\d+\.\d+))");
    static const std::regex env(R"((NCCL_[A-Z0-9_]+) set by environment to (\S*))");
    static const std::regex bootstrap(R"(Bootstrap ?: Using \[?\d*\]?([A-Za-z0-9_.\-]+):([^\s<]+))");
    static const std::regex net_ib_dev(R"(\[\d+\]([A-Za-z0-9_\-]+):(\d+)/(RoCE|IB))");
    static const std::regex net_socket(R"(NET/Socket ?: Using \[\d+\]([A-Za-z0-9_.\-]+):)");
    static const std::regex plugin_loaded(R"(NET/Plugin ?: (?:Loaded|Plugin name set by env to|Using) (?:net plugin )?'?([A-Za-z0-9_.\-]+))");
    static const std::regex edge(R"((?:Ring|Channel|Tree) \d+\S* ?: (\d+)\[(\d+)\] -> (\d+)\[(\d+)\](?:\s*\[\w+\])? via (\S+))");
    static const std::regex peer(R"(Device=(\d+) (CAN|CANNOT) Access Peer Device=(\d+))");
    static const std::regex nranks(R"(nranks (\d+))");
    static const std::regex ib_completion(R"(NET/IB ?: Got completion (?:from peer (\S+) )?with (?:status=|error )(\d+))");
    static const std::regex hca(R"(hca (\S+))");
    static const std::regex watchdog_fields(R"(SeqNum=(\d+), OpType=(\w+).*?Timeout\(ms\)=(\d+))");
    static const std::regex mismatch_fields(R"(Rank (\d+) is running collective: CollectiveFingerPrint\(SequenceNumber=(\d+), OpType=(\w+))");
    static const std::regex tr_rank(R"(^\s*rank\s*:\s*(\d+) \(local_rank)");
    static const std::regex tr_host(R"(^\s*host\s*:\s*(\S+))");
    static const std::regex tr_exit(R"(^\s*exitcode\s*:\s*(-?\d+))");
    static const std::regex tr_signal(R"(Signal (\d+) \((SIG\w+)\) received by PID (\d+))");
    static const std::regex py_exc(R"(^(?:\[[^\]]*\]:?\s*)*([A-Za-z_][\w.]*(?:Error|Exception)): (.+))");
    static const std::regex timeout_ms(R"(Timeout\(ms\)=(\d+))");

    const LineWho w = who_of(text);
    const bool is_nccl = has(text, "NCCL");
    if (is_nccl) ++nccl_lines;
    std::smatch m;

    // ---- structural facts ----
    if (std::regex_search(text, m, version)) fact("log.nccl_version", w, lineno, text, {{"version", m[1].str()}});
    if (std::regex_search(text, m, env)) fact("log.nccl_env", w, lineno, text, {{"name", m[1].str()}, {"value", m[2].str()}});
    if (std::regex_search(text, m, bootstrap))
      fact("log.bootstrap", w, lineno, text, {{"ifname", m[1].str()}, {"addr", m[2].str()}});
    if (has(text, "NET/IB") && has(text, "Using")) {
      nlohmann::json devs = nlohmann::json::array();
      for (auto it = std::sregex_iterator(text.begin(), text.end(), net_ib_dev); it != std::sregex_iterator(); ++it)
        devs.push_back({{"nic", (*it)[1].str()}, {"port", std::stoi((*it)[2].str())}, {"link", (*it)[3].str()}});
      if (!devs.empty()) fact("log.net_ib", w, lineno, text, {{"devices", devs}});
    }
    if (std::regex_search(text, m, net_socket)) fact("log.net_socket", w, lineno, text, {{"ifname", m[1].str()}});
    if (has(text, "NET/Plugin")) {
      if (has(text, "No plugin found")) fact("log.net_plugin", w, lineno, text, {{"state", "none"}, {"name", ""}});
      else if (std::regex_search(text, m, plugin_loaded))
        fact("log.net_plugin", w, lineno, text, {{"state", "loaded"}, {"name", m[1].str()}});
    }
    if (std::regex_search(text, m, edge))
      fact("log.channel_edge", w, lineno, text,
           {{"from_rank", std::stoi(m[1].str())}, {"from_dev", std::stoi(m[2].str())},
            {"to_rank", std::stoi(m[3].str())}, {"to_dev", std::stoi(m[4].str())}, {"transport", m[5].str()}});
    if (std::regex_search(text, m, peer))
      fact("log.peer_access", w, lineno, text,
           {{"from_dev", std::stoi(m[1].str())}, {"to_dev", std::stoi(m[3].str())}, {"can", m[2].str() == "CAN"}});
    if (is_nccl && std::regex_search(text, m, nranks))
      fact("log.init", w, lineno, text, {{"what", "nranks"}, {"nranks", std::stoi(m[1].str())}});
    else if (has(text, "Init COMPLETE") || has(text, "Setting affinity") || has(text, "Connected all rings") ||
             has(text, "# Using devices"))
      fact("log.init", w, lineno, text, {{"what", "init"}});
    if (has(text, "Avg bus bandwidth") || has(text, "Out of bounds values"))
      fact("log.init", w, lineno, text, {{"what", "results"}});

    if (has(text, "NCCL WARN")) {
      ++warn_lines;
      const auto pos = text.find("NCCL WARN");
      fact("log.warn", w, lineno, text, {{"text", text.substr(pos + 10, 240)}});
    }

    // ---- torchrun failure block ----
    if (std::regex_search(text, m, tr_rank)) pending_rank = std::stoi(m[1].str());
    if (std::regex_search(text, m, tr_host)) pending_host = m[1].str();
    if (std::regex_search(text, m, tr_exit)) {
      const int code = std::stoi(m[1].str());
      LineWho ww = w;
      if (pending_rank) ww.rank = *pending_rank;
      if (file_host.empty() && !pending_host.empty()) ww.host = pending_host;
      if (code < 0) {
        auto& f = finding("log.rank_killed", Layer::framework, Severity::critical, FindingRole::primary,
                          "rank process killed by signal " + std::to_string(-code), ww, lineno, text);
        f.fields = {{"exitcode", code}};
        f.supports.push_back({"rank_process_died", 30});
      } else if (code > 0) {
        auto& f = finding("log.rank_exited", Layer::framework, Severity::error, FindingRole::primary,
                          "rank process exited with code " + std::to_string(code), ww, lineno, text);
        f.fields = {{"exitcode", code}};
        // exit 1 is what an uncaught Python exception gives: a weak vote for a
        // bug in the script; the traceback decides.
        f.supports.push_back({"user_code_bug", 3});
        f.supports.push_back({"rank_process_died", 2});
      }
      pending_rank.reset();
      pending_host.clear();
    }
    if (std::regex_search(text, m, tr_signal)) {
      auto& f = finding("log.rank_killed", Layer::framework, Severity::critical, FindingRole::primary,
                        "rank process received " + m[2].str(), w, lineno, text);
      f.subject.pid = std::stoll(m[3].str());
      f.fields = {{"signal", m[2].str()}};
      f.supports.push_back({"rank_process_died", 30});
    }

    // ---- mechanism signals ----
    for (const auto& s : signals()) {
      if (!signal_matches(s, text)) continue;
      auto& f = finding(std::string("log.") + s.id, s.layer, s.severity, s.role, s.summary, w, lineno, text);
      f.supports = s.supports;
      if (std::string_view(s.id) == "watchdog_timeout") {
        if (std::regex_search(text, m, watchdog_fields)) {
          f.fields = {{"seq", std::stoll(m[1].str())}, {"op", m[2].str()}, {"timeout_ms", std::stoll(m[3].str())}};
          f.subject.seq = std::stoll(m[1].str());
        } else if (std::regex_search(text, m, timeout_ms)) {
          f.fields = {{"timeout_ms", std::stoll(m[1].str())}};
        }
      } else if (std::string_view(s.id) == "collective_mismatch" && std::regex_search(text, m, mismatch_fields)) {
        f.fields = {{"rank", std::stoi(m[1].str())}, {"seq", std::stoll(m[2].str())}, {"op", m[3].str()}};
        f.subject.seq = std::stoll(m[2].str());
      } else if (std::string_view(s.id) == "ibv_enodev" || std::string_view(s.id) == "ibv_unreachable") {
        static const std::regex call(R"((ibv_\w+) failed)");
        if (std::regex_search(text, m, call)) f.fields = {{"call", m[1].str()}};
      }
    }
    if (std::regex_search(text, m, ib_completion)) {
      const int status = std::stoi(m[2].str());
      const bool flush = status == 5;  // IBV_WC_WR_FLUSH_ERR: the QP was already in error
      auto& f = finding(flush ? "log.ib_completion_flushed" : "log.ib_completion_error", Layer::transport,
                        flush ? Severity::warning : Severity::error, flush ? FindingRole::cascade : FindingRole::primary,
                        "IB completion error status " + std::to_string(status) +
                            (m[1].matched ? " from peer " + m[1].str() : std::string()),
                        w, lineno, text);
      f.fields = {{"status", status}};
      if (m[1].matched) f.fields["peer"] = m[1].str();
      std::smatch hm;
      if (std::regex_search(text, hm, hca)) f.subject.nic = hm[1].str();
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
    if (has(text, "/RoCE") || has(text, "RoCE v2") || has(text, "RoCE V2") ||
        (has(text, "link_layer") && has(text, "Ethernet")))
      roce = true;
    if (!qp_unreached && (has(text, "IBV_WC_RETRY_EXC_ERR") || has(text, "with status=12") ||
                          has(text, "with error 12") || (has(text, "ibv_modify_qp") && has(text, "timed out"))))
      qp_unreached = std::make_pair(lineno, text.substr(0, 300));
    for (auto& c : line_cues(text)) {
      auto& f = finding("log.cue." + c.id, c.layer, c.severity, c.role, c.summary, w, lineno, text);
      f.supports = std::move(c.supports);
      f.fields = {{"subsystem", c.subsystem}, {"cue", true}};
    }
    if (is_failure_marker(text)) {
      ++markers;
      if (marker_lines.size() < kMaxMarkers)
        marker_lines.push_back({{"source", source}, {"line", lineno}, {"text", text.substr(0, 240)}});
    }
    if (std::regex_search(text, m, py_exc) && !is_distributed_exception(text)) {
      auto& f = finding("log.python_exception", Layer::framework, Severity::error, FindingRole::primary,
                        "uncaught " + m[1].str() + " in the training script", w, lineno, text);
      f.fields = {{"exception", m[1].str()}, {"message", m[2].str().substr(0, 200)}};
      f.supports.push_back({"user_code_bug", 20});
    }
  }
};

}  // namespace

struct LogFactExtractor::Impl {
  std::string source, host;
  Extractor ex;
  PastedBlocks blocks;
  int64_t lineno = 0;
  size_t nccl_lines = 0, warn_lines = 0;
  Impl(const std::string& s, const std::string& h, EvidenceSet& set)
      : source(s), host(h), ex{source, host, set, std::nullopt, {}, {}, {}, {}, {}, {}, {}, {}} {}
};

LogFactExtractor::LogFactExtractor(const std::string& source, const std::string& host, EvidenceSet& set)
    : impl_(std::make_unique<Impl>(source, host, set)) {}

LogFactExtractor::~LogFactExtractor() = default;

void LogFactExtractor::line(std::string_view raw) {
  ++impl_->lineno;
  while (!raw.empty() && (raw.back() == '\r' || raw.back() == '\n')) raw.remove_suffix(1);
  if (raw.empty()) return;
  const std::string line(raw.substr(0, kMaxLine));
  try {
    impl_->ex.line(line, impl_->lineno, impl_->nccl_lines, impl_->warn_lines);
    impl_->blocks.line(line, impl_->lineno);
  } catch (const std::exception&) {
    // std::regex can throw on pathological input (error_complexity/stack), a
    // number can overflow stoi: one bad line is skipped, never fatal.
  }
}

void LogFactExtractor::finish() {
  Evidence e;
  e.kind = "log.facts_summary";
  if (!impl_->host.empty()) e.subject.host = impl_->host;
  e.provenance.source = impl_->source;
  e.data = {{"lines", impl_->lineno}, {"nccl_lines", impl_->nccl_lines}, {"warn_lines", impl_->warn_lines}};
  impl_->ex.set.evidence.push_back(std::move(e));
  impl_->blocks.finish(impl_->source, impl_->host, impl_->ex.set);
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
  if (impl_->ex.markers > 0) {
    Evidence m;
    m.kind = "log.failure_markers";
    if (!impl_->host.empty()) m.subject.host = impl_->host;
    m.provenance.source = impl_->source;
    m.data = {{"count", impl_->ex.markers}, {"lines", impl_->ex.marker_lines}};
    impl_->ex.set.evidence.push_back(std::move(m));
  }
}

void extract_log_facts(std::string_view text, const std::string& source, const std::string& host, EvidenceSet& set) {
  LogFactExtractor x(source, host, set);
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    x.line(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
  }
  x.finish();
}

}  // namespace ccdiag
