// The evidence-kind registry and the typed views (ccdiag/evidence_kinds.hpp).
#include "ccdiag/evidence_kinds.hpp"

#include <algorithm>
#include <cmath>

namespace ccdiag {

namespace {

using nlohmann::json;

EvidenceField F(std::string name, std::string type, std::string doc, bool required = false) {
  return EvidenceField{std::move(name), std::move(type), required, std::move(doc)};
}
EvidenceField R(std::string name, std::string type, std::string doc) { return F(name, type, doc, true); }

std::vector<EvidenceKindInfo> build() {
  const Layer fw = Layer::framework, nc = Layer::nccl, tr = Layer::transport, hw = Layer::hardware,
              sc = Layer::system_config;
  const std::optional<Layer> none;  // log facts: no layer is checked by a log
  std::vector<EvidenceKindInfo> k = {
      // ---- host / system-config (collectors/host, collectors/config)
      {"host.identity", sc, "collector host", {"/proc/sys/kernel/hostname", "/proc/sys/kernel/random/boot_id", "/proc/version", "/proc/cmdline"}, "host",
       {R("hostname", "string", "the host name"), R("boot_id", "string", "kernel boot id (same id on two hosts: a cloned image)"),
        F("kernel", "string", "osrelease"), F("proc_version", "string", "/proc/version"), F("cmdline", "string", "/proc/cmdline"),
        F("live", "boolean", "read from the running host, not a --root tree")},
       {"rule host_config", "analyze"}, "who the host is; two hosts with one boot_id or short name share NCCL's host hash"},
      {"host.versions", sc, "collector versions", {"library directories (libnccl.so.*, libcuda.so.*, libnvidia-ml.so.*)", "/usr/local/cuda/version.json", "/proc/driver/nvidia/version"}, "host",
       {R("nccl_version", "string", "newest libnccl.so.<x.y.z> found (empty: none)"), F("nccl_libraries", "array", "paths of every libnccl found"),
        F("cuda_toolkit_version", "string", "/usr/local/cuda/version.json"),
        F("driver_version", "string|null", "kernel module version (/proc/driver/nvidia/version); null: no driver loaded"),
        F("user_driver_version", "string", "user-space driver library version (libcuda.so.<v> / libnvidia-ml.so.<v>)"),
        F("user_driver_libraries", "array", "paths of the user-space driver libraries found")},
       {"rule skew_audit", "rule host_config", "analyze", "prom"}, "library and driver versions"},
      {"host.dev_shm", sc, "collector dev_shm", {"/proc/mounts", "statvfs(/dev/shm) live"}, "host",
       {R("size_bytes", "integer", "size of the /dev/shm tmpfs"), F("from", "string", "mount option size= or statvfs")},
       {"rule dev_shm_size", "analyze"}, "the /dev/shm NCCL's SHM transport allocates in"},
      {"host.memlock", sc, "collector host_config", {"/proc/<pid>/limits", "/proc/self/limits"}, "host (pid, rank)",
       {R("soft", "integer|string", "bytes, or \"unlimited\""), R("hard", "integer|string", "bytes, or \"unlimited\""),
        F("pid", "integer", "the rank's pid (absent: ccdiag's own limit)"), F("comm", "string", "process name"),
        F("rank", "integer", "rank, when known"), F("local_rank", "integer", "local rank, when known")},
       {"rule host_config", "config findings"}, "RLIMIT_MEMLOCK of every rank (RDMA registration pins memory)"},
      {"host.peermem", sc, "collector host_config", {"/sys/module/nvidia_peermem", "/sys/kernel/mm/memory_peers", "/proc/modules", "/proc/sys/kernel/osrelease"}, "host",
       {R("nvidia_peermem", "boolean", "nvidia_peermem module loaded"), F("nv_peer_mem_legacy", "boolean", "legacy nv_peer_mem loaded"),
        F("dmabuf_kernel", "boolean", "kernel >= 5.12 (DMA-BUF)"), F("nvidia_open_kernel_module", "boolean", "open GPU kernel modules"),
        F("dmabuf_possible", "boolean", "DMA-BUF GPUDirect possible"), R("gdr_possible", "boolean", "some GPUDirect RDMA path exists"),
        F("nvidia_gpus", "integer", "NVIDIA GPUs on the PCI bus"), F("rdma_devices", "integer", "RDMA devices in /sys/class/infiniband")},
       {"rule host_config", "config findings"}, "GPUDirect RDMA support"},
      {"host.fabric_manager", sc, "collector host_config", {"/sys/bus/pci/devices (NVSwitch class)", "/dev/nvidia-nvswitchctl", "/proc/*/comm"}, "host",
       {R("nvswitch_system", "boolean", "NVSwitch devices present"), R("fabric_manager_running", "boolean", "nv-fabricmanager process found"),
        F("fabric_manager_pid", "integer", "its pid"), F("nvswitch_pci_devices", "integer|array", "NVSwitch PCI functions"),
        F("nvswitchctl", "boolean", "/dev/nvidia-nvswitchctl exists")},
       {"rule host_config", "config findings"}, "NVSwitch systems need nvidia-fabricmanager"},
      {"host.iommu", sc, "collector pcie", {"/sys/class/iommu", "/sys/kernel/iommu_groups", "/proc/cmdline"}, "host",
       {R("mode", "string", "off | passthrough | translated | unknown"), R("translated", "boolean", "mode == translated"),
        F("units", "array", "IOMMU units"), F("group_count", "integer", "IOMMU groups"),
        F("devices", "array", "GPU/NIC {bdf, role, group, type (DMA, DMA-FQ, identity)}"), F("cmdline", "object", "IOMMU kernel parameters")},
       {"rule pcie_state", "pcie findings"}, "DMA translation between GPUs and NICs"},
      {"host.logind", sc, "collector logind", {"/etc/systemd/logind.conf", "/usr/lib/systemd/logind.conf", "logind.conf.d drop-ins", "/run/systemd/system"}, "host",
       {R("remove_ipc", "boolean", "effective RemoveIPC"), F("set_by", "string", "file that decided (or systemd default)"), F("files", "array", "files read")},
       {"rule host_config"}, "systemd-logind RemoveIPC (unlinks a user's SHM when the last session ends)"},
      {"host.firewall", sc, "collector firewall", {"nft -j list ruleset / iptables-save (live)", "/nft-ruleset.json, /iptables-save.txt (--root)", "/proc/sys/net/ipv4/ip_local_port_range"}, "host",
       {R("input_policy", "string", "accept | drop"), F("allows_ephemeral", "boolean", "inbound TCP to the ephemeral port range allowed (absent: undecidable)"),
        F("why", "string", "the rule or policy that decided"), F("ephemeral_range", "string", "lo-hi"), F("source", "string", "where the rules came from")},
       {"rule host_config"}, "what the input filter does to NCCL's random high ports"},
      {"host.resolve", sc, "collector resolve", {"getaddrinfo (live)", "/etc/hosts (--root)"}, "host",
       {R("name", "string", "the host name"), R("addr", "string", "first address it resolves to (empty: none)"),
        F("addrs", "array", "every address"), F("loopback", "boolean", "addr is a loopback address"), F("error", "string", "resolver error")},
       {"rule host_config"}, "what the host name resolves to (loopback breaks multi-host rendezvous)"},
      // ---- hardware (collectors/pcie, collectors/gpu, collectors/kernel)
      {"pcie.link", hw, "collector pcie", {"/sys/bus/pci/devices/<bdf>/{current,max}_link_{speed,width}", "/sys/bus/pci/devices/<bdf>/{class,vendor,device,numa_node,local_cpulist}", "/proc/driver/nvidia/gpus/<bdf>/information"}, "host, gpu (GPU endpoints) or nic",
       {R("bdf", "string", "endpoint PCI address"), R("role", "string", "gpu | nic"), F("gpu_index", "integer", "GPU ordinal"),
        F("nvidia_minor", "integer", "/dev/nvidiaN"), F("rdma_devices", "array", "RDMA devices of a NIC endpoint"),
        F("numa_node", "integer", "NUMA node"), F("local_cpulist", "string", "CPUs near the device"),
        R("path", "array", "hops, endpoint first then bridges to the root port: {bdf, hop (endpoint|bridge|root_port), "
                            "current_link_speed_gts (number|null: Unknown), max_link_speed_gts, current_link_width, max_link_width, "
                            "*_raw (the sysfs text)}"),
        F("path_resolved", "boolean", "the hops were resolved through the device links"), F("root_port", "string", "root port bdf"),
        F("nearest_nic", "object", "GPU endpoints: NIC at the lowest topology level"), F("config_all_ones", "boolean", "config space reads all-ones (device gone)")},
       {"rule pcie_state", "pcie findings", "analyze", "prom"}, "one GPU or NIC and every PCIe link on its path"},
      {"pcie.aer", hw, "collector pcie", {"/sys/bus/pci/devices/<bdf>/aer_dev_{correctable,nonfatal,fatal}", "aer_rootport_total_err_*"}, "host (gpu)",
       {R("bdf", "string", "device"), F("correctable", "object", "{counters, total}"), F("nonfatal", "object", "{counters, total}"), F("fatal", "object", "{counters, total}")},
       {"pcie findings"}, "AER error counters since boot"},
      {"pcie.acs", hw, "collector pcie", {"/sys/bus/pci/devices/<bdf>/config (ACS extended capability)"}, "host",
       {R("bdf", "string", "bridge"), F("port_type", "string", "PCIe port type"), F("config_bytes", "integer", "config space readable (64 without CAP_SYS_ADMIN)"),
        F("acs_capability", "boolean", "the bridge has ACS (absent: config space too short to tell)"),
        F("acs_cap", "integer", "ACS capability bits"), F("acs_ctl", "integer", "ACS control bits"), F("acs_cap_text", "string", "lspci style"),
        F("acs_ctl_text", "string", "lspci style, \"SrcValid+ ReqRedir+ ...\""), F("req_redirect", "boolean", "P2P Request Redirect enabled"),
        F("cmplt_redirect", "boolean", "P2P Completion Redirect enabled"), F("on_p2p_path", "boolean", "on a GPU<->GPU/NIC path"),
        F("p2p_pairs", "array", "the pairs whose traffic it carries"), F("config_all_ones", "boolean", "config space reads all-ones")},
       {"rule pcie_state", "pcie findings"}, "ACS redirection on a bridge (forces P2P up to the root complex)"},
      {"gpu.nvml", hw, "collector gpu", {"libnvidia-ml.so.1 (nvmlInit, nvmlSystemGet*)"}, "host",
       {F("library", "string", "library loaded"), F("init_return", "string", "nvmlInit result"), F("driver_version", "string", "nvmlSystemGetDriverVersion"),
        F("cuda_driver_version", "integer", "nvmlSystemGetCudaDriverVersion"), F("device_count", "integer", "GPUs"), F("devices", "array", "index, bdf, uuid")},
       {"gpu findings"}, "NVML itself: loadable, initialised, driver"},
      {"gpu.device", hw, "collector gpu", {"libnvidia-ml.so.1 (one child per GPU)"}, "host, gpu (bdf), pid",
       {F("index", "integer", "GPU ordinal"), F("bdf", "string", "PCI address"), F("uuid", "string", "GPU UUID"), F("name", "string", "model"),
        F("fabric", "object", "{state, state_name (not_supported|not_started|in_progress|completed), status, status_name, health_summary_name}"),
        F("clocks_event_reasons", "array|object", "throttle reasons"), F("processes", "array", "compute processes {pid}")},
       {"rule host_config", "gpu findings", "analyze", "prom"}, "one GPU's state (ECC, retired pages, clocks, fabric, processes)"},
      {"gpu.p2p", hw, "collector gpu / probe p2p", {"nvmlDeviceGetP2PStatus", "libcuda.so.1 (probe p2p)"}, "host",
       {F("source", "string", "nvml | cuda")}, {"gpu findings"}, "GPU pair peer-to-peer status"},
      {"nvlink.link", hw, "collector gpu", {"libnvidia-ml.so.1 (nvmlDeviceGetNvLink*)"}, "host, gpu",
       {R("link", "integer", "link number"), R("active", "boolean", "nvmlDeviceGetNvLinkState"), F("version", "integer", "NVLink version"),
        F("remote_bdf", "string", "peer"), F("remote_type", "string", "gpu | switch | ibmnpu"), F("gpu_index", "integer", "GPU ordinal"),
        F("counters_t0", "object", "error counters"), F("counters_t1", "object", "second sample"), F("counters_delta", "object", "growth")},
       {"rule pcie_state", "gpu findings", "analyze", "prom"}, "one NVLink of one GPU"},
      {"kernel.source", hw, "collector kernel_log", {"/dev/kmsg", "journalctl -k", "--kernel-log FILE"}, "host",
       {F("records", "integer", "records read"), F("lost", "integer", "records lost"), F("bytes", "integer", "bytes read")},
       {"tree walk (layer checked)"}, "where the kernel log came from; its lines become kernel.* findings"},
      {"kernel.log", hw, "kernel log reader (pipeline)", {"raw/kernel.log"}, "host", {}, {"tree walk (layer checked)"}, "the kernel log was read"},
      // ---- transport (collectors/rdma, collectors/host)
      {"rdma.port", tr, "collector rdma", {"/sys/class/infiniband/<dev>/ports/<p>/{state,phys_state,rate,link_layer,lid,sm_lid,gids}", "/sys/class/infiniband/<dev>/device"}, "host, nic, port",
       {R("device", "string", "RDMA device"), R("port", "integer", "port number"), F("state", "string", "name part of sysfs state: ACTIVE, DOWN, INIT"),
        F("state_raw", "string", "\"4: ACTIVE\""), F("state_code", "integer", "4"), F("phys_state", "string", "LinkUp, Polling, Disabled"),
        F("phys_state_raw", "string", "\"5: LinkUp\""), F("rate", "string", "\"400 Gb/sec (4X NDR)\""), F("rate_gbps", "number", "400"),
        F("link_layer", "string", "InfiniBand | Ethernet"), F("gids", "array", "{index, gid}"), F("netdevs", "array", "netdevs of a RoCE port"),
        F("bdf", "string", "PCI address")},
       {"rule rdma_state", "rule skew_audit", "rdma findings", "analyze", "prom"}, "one IB/RoCE port"},
      {"rdma.counters", tr, "collector rdma", {"/sys/class/infiniband/<dev>/ports/<p>/counters", "hw_counters", "second sample after the interval"}, "host, nic, port",
       {R("device", "string", "RDMA device"), R("port", "integer", "port"), F("interval_s", "number", "seconds between samples"),
        R("sampled_twice", "boolean", "counters carry t1 and delta"),
        R("counters", "object", "{name: {t0, t1, delta, per_s, class}} (t0 only when sampled once)"), F("hw_counters", "object", "same shape"),
        F("xmit_bytes_delta", "integer", "bytes sent in the window"), F("read_errors", "object", "counters that could not be read")},
       {"rule rdma_state", "rdma findings", "analyze", "prom"}, "port counters (link_downed, symbol_error, retransmissions ...)"},
      {"rdma.qp", tr, "collector rdma", {"NETLINK_RDMA RES_QP_GET (live)", "/rdma-res-qp.json (--root)"}, "host",
       {R("qps", "array", "{device, lqpn, port, rqpn, type, state (RTS, ERR, SQE ...), pid, self_connected}"), F("count", "integer", "QPs"),
        F("by_state", "object", "{state: count}"), F("devices", "integer", "devices asked"), F("undecodable", "integer", "entries skipped")},
       {"rule rdma_state", "rdma findings"}, "the QPs of the host's processes"},
      {"net.netdev", tr, "collector rdma", {"/sys/class/net/<if>/{operstate,mtu,carrier,speed,carrier_changes}"}, "host, nic",
       {R("name", "string", "netdev of a RoCE/IPoIB port"), F("rdma_device", "string", "its RDMA device"), F("rdma_port", "integer", "its port"),
        F("operstate", "string", "up | down"), F("mtu", "integer", "MTU"), F("carrier", "integer|null", "carrier"), F("speed_mbps", "integer|null", "speed"),
        F("carrier_changes_delta", "integer", "carrier flaps in the window")},
       {"rdma findings"}, "the netdev behind an RDMA port"},
      {"net.link", tr, "collector net", {"/sys/class/net/<if>/{operstate,carrier,mtu,speed,address}"}, "host, nic (netdev)",
       {R("netdev", "string", "interface"), F("operstate", "string", "up | down | unknown"), F("carrier", "integer|null", "null on a down link"),
        F("mtu", "integer|null", "MTU"), F("speed_mbps", "integer|null", "null: unknown"), F("virtual", "boolean", "under /devices/virtual"),
        F("address", "string", "MAC")},
       {"rule skew_audit"}, "every network interface's link state, MTU and speed"},
      // ---- framework (collectors/proc, collectors/stacks, fr)
      {"ranks.process", fw, "collector ranks", {"/proc/<pid>/{status,cmdline,environ (allowlisted),stat}"}, "host, pid, rank, gpu",
       {F("rank", "integer", "RANK"), F("local_rank", "integer", "LOCAL_RANK"), F("world_size", "integer", "WORLD_SIZE"),
        F("local_world_size", "integer", "LOCAL_WORLD_SIZE (ranks on this node)"), F("pid", "integer", "pid"),
        F("uid", "integer", "real uid (/proc/<pid>/status)"),
        R("alive", "boolean", "the process runs"), F("state", "string", "R, S, D, Z"), F("signal", "string", "killing signal of a dead rank"),
        F("exit_code", "integer", "exit code of a dead rank"), F("env", "object", "allowlisted, redacted environment")},
       {"rule rank_census", "rule skew_audit", "analyze"}, "one training rank"},
      {"stacks.process", fw, "collector stacks", {"ptrace + /proc/<pid>/{task,maps,mem}"}, "host, pid, rank",
       {F("pid", "integer", "pid"), F("rank", "integer|null", "rank"), F("comm", "string", "name"), F("activity", "string", "what the main thread does"),
        F("threads", "array", "per thread {tid, role, frames[{function, file, line}], python}"), F("problems", "array", "what could not be read")},
       {"stack census", "analyze"}, "native and Python stacks of one rank (ProcessStacks)"},
      {"fr.rank_progress", fw, "fr reader (collectors/fr/progress)", {"raw/fr/* flight-recorder dumps"}, "host, rank, process_group",
       {R("rank", "integer", "global rank (the dump's)"), R("process_group", "string", "the group's cross-rank name (\"0\" = default)"),
        F("pg_desc", "string", "the group's description (DeviceMesh dimension, \"default_pg\")"),
        F("last_enqueued_seq", "integer|null", "highest collective seq the rank enqueued in the group"),
        F("last_started_seq", "integer|null", "highest seq seen started (null: the backend records none)"),
        F("last_completed_seq", "integer|null", "highest seq completed (pg_status for CPU backends)"),
        F("group_size", "integer", "members of the group (pg_config)"), F("members", "array", "the group's global ranks (pg_config)"), F("op", "string", "profiling name of its last collective"),
        F("state", "string", "state of that entry"), F("backend", "string", "gloo, nccl, ...")},
       {"analyze (rank x sequence picture)"}, "how far one rank got in one process group, by its own dump"},
      {"fr.analysis", fw, "fr reader (pipeline)", {"raw/fr/* flight-recorder dumps"}, "host", {}, {"tree walk (layer checked)"},
       "a flight-recorder cross-rank analysis ran (its conclusions are fr.* findings)"},
      {"perf.run", tr, "perf reader", {"nccl-tests / perftest results"}, "host", {}, {"tree walk (layer checked)"}, "a bandwidth result was read"},
      {"perf.fr_links", tr, "perf reader", {"flight-recorder dumps (--fr)"}, "host", {}, {"tree walk (layer checked)"}, "per-link timings from flight-recorder dumps"},
      // ---- nccl
      {"nccl.ras", nc, "collector nccl", {"NCCL RAS socket (localhost:28028)"}, "host", {}, {"tree walk (layer checked)"}, "NCCL RAS status (its findings come from raw/nccl-ras.*)"},
      {"nccl.fr", nc, "collector nccl", {"ccdiag profiler plugin rings (/dev/shm)"}, "host", {}, {"tree walk (layer checked)"}, "ccdiag profiler plugin rings (their findings come from raw/ artefacts)"},
      {"nccl.attach", nc, "collector nccl_attach", {"process memory of each rank (process_vm_readv)", "libnccl DWARF / data/nccl-layouts.json"}, "host, pid",
       {F("processes", "array", "the processes[] of `nccl attach --json`")}, {"attach analysis"}, "communicator and proxy state read out of NCCL"},
      {"nccl.topology", nc, "log analyzer", {"NCCL INFO lines"}, "host, rank", {}, {"tree walk (log-derived)"}, "NCCL topology from logs"},
      {"nccl.version", nc, "log analyzer", {"NCCL INFO lines"}, "host, rank", {}, {"tree walk (log-derived)"}, "NCCL version from logs"},
      // ---- logs (the tree's log facts, analysis/tree/log_facts.cpp)
      {"log.summary", none, "log analyzer", {"log files"}, "", {}, {"logs report"}, "one log file's summary"},
      {"log.nccl_version", none, "log facts", {"log files"}, "host, rank", {R("version", "string", "\"2.21.5\"")}, {"rule skew_audit"}, "NCCL version line"},
      {"log.nccl_env", none, "log facts", {"log files"}, "host, rank", {R("name", "string", "NCCL_*"), R("value", "string", "value")},
       {"rule skew_audit", "rule socket_ifname"}, "\"NCCL_X set by environment to Y\""},
      {"log.bootstrap", none, "log facts", {"log files"}, "host, rank", {F("ifname", "string", "interface"), F("addr", "string", "address")},
       {"rule socket_ifname"}, "\"Bootstrap : Using ifname:addr\""},
      {"log.net_plugin", none, "log facts", {"log files"}, "host, rank", {R("state", "string", "loaded | none"), F("name", "string", "plugin")},
       {"rule skew_audit"}, "net plugin load line"},
      {"log.net_ib", none, "log facts", {"log files"}, "host, rank", {R("devices", "array", "{nic, port, link}")},
       {"rule selected_hca", "rule rdma_state", "rule host_config"}, "\"NET/IB : Using [0]mlx5_0:1/IB ...\""},
      {"log.net_socket", none, "log facts", {"log files"}, "host, rank", {F("ifname", "string", "interface")}, {}, "\"NET/Socket : Using ...\" (no reader yet)"},
      {"log.store_connect_failed", none, "log facts", {"log files"}, "host, rank", {R("addr", "string", "MASTER_ADDR as the client used it"), R("port", "integer", "MASTER_PORT")},
       {"rule store_target_local"}, "a c10d store client's failed connect (\"The client socket has timed out ... (addr, port)\", \"TCP client failed to connect/validate to host addr:port\")"},
      {"log.iface_addr", none, "log facts", {"log files"}, "host, rank", {R("ifname", "string", "interface"), R("addr", "string", "address (or a paste's placeholder)")},
       {"rule one_name_two_addresses"}, "an interface and its address in Bootstrap, NET/Socket, OOB or NCCL 2.3's \"NET : Using interface\" lines"},
      {"log.channel_edge", none, "log facts", {"log files"}, "host, rank",
       {F("from_rank", "integer", ""), F("from_dev", "integer", ""), F("to_rank", "integer", ""), F("to_dev", "integer", ""), F("transport", "string", "P2P, SHM, NET ..."),
        F("direction", "string", "send | receive (network peers)"), F("comm", "string", "commId, else nranks:N"),
        F("channels", "integer", "channel lines that showed this edge (one fact per edge, not per channel)")},
       {"rule cross_host_p2p", "rule p2p_silent_hang", "rule pcie_state", "rule net_without_gdr", "rule socket_ifname"}, "\"Channel 00 : 0[0] -> 1[1] via P2P/IPC\""},
      {"log.coll_calls", none, "log facts", {"log files"}, "host, pid, rank",
       {F("comm", "string", "commId, else nranks:N#k"), F("nranks", "integer", ""),
        F("ops", "array", "[opCount, func, count, datatype, op, root], the first 64"),
        F("last_op", "integer", "highest opCount logged"), F("calls", "integer", "COLL lines")},
       {"rule coll_disagreement"}, "\"AllReduce: opCount 3 ... count 1024 datatype 7 ... comm 0x.. [nranks=8]\""},
      {"log.gdr_in_use", none, "log facts", {"log files"}, "host, pid", {F("process", "string", "host:pid")},
       {"rule net_without_gdr"}, "\"Connected all rings, use ring PXN 0 GDR 1\", \"GPU Direct RDMA Enabled for HCA\""},
      {"log.peer_access", none, "log facts", {"log files"}, "host, rank", {F("from_dev", "integer", ""), F("to_dev", "integer", ""), F("can", "boolean", "")},
       {"rule p2p_silent_hang", "rule pcie_state"}, "cudaDeviceCanAccessPeer results"},
      {"log.init", none, "log facts", {"log files"}, "host, rank", {F("what", "string", "init step")}, {"rule p2p_silent_hang"}, "\"Init COMPLETE\" and friends"},
      {"log.warn", none, "log facts", {"log files"}, "host, rank", {F("text", "string", "the WARN text")}, {"rule p2p_silent_hang"}, "NCCL WARN lines"},
      {"log.facts_summary", none, "log facts", {"log files"}, "", {}, {"tree walk (log-derived)"}, "counts of the facts read"},
      {"log.failure_markers", none, "log facts", {"log files"}, "",
       {F("count", "integer", "failure lines"), F("lines", "array", "{source, line, text}, at most 8")}, {"decide (unrecognized_failure)"},
       "failure lines no rule may explain"},
  };
  std::sort(k.begin(), k.end(), [](const auto& a, const auto& b) { return a.kind < b.kind; });
  return k;
}

// Kinds that arrive from older or hand-made bundles under a family prefix.
constexpr std::pair<std::string_view, Layer> kPrefixLayers[] = {
    {"fr.", Layer::framework},       {"stacks.", Layer::framework},       {"ranks.", Layer::framework},
    {"pytorch.", Layer::framework},  {"nccl.", Layer::nccl},              {"rdma.", Layer::transport},
    {"net.", Layer::transport},      {"kernel.", Layer::hardware},        {"gpu.", Layer::hardware},
    {"nvml.", Layer::hardware},      {"pcie.", Layer::hardware},          {"nvlink.", Layer::hardware},
    {"host.", Layer::system_config}, {"config.", Layer::system_config},   {"perf.", Layer::transport}};

// --- tolerant accessors -----------------------------------------------------

const json* member(const json& j, const char* k) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(k);
  return it == j.end() ? nullptr : &*it;
}
std::string str(const json& j, const char* k) {
  const json* v = member(j, k);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}
std::optional<int64_t> i64(const json& j, const char* k) {
  const json* v = member(j, k);
  if (!v) return std::nullopt;
  if (v->is_number_integer() || v->is_number_unsigned()) return v->get<int64_t>();
  if (v->is_number_float() && std::isfinite(v->get<double>())) return static_cast<int64_t>(v->get<double>());
  return std::nullopt;
}
std::optional<int> i32(const json& j, const char* k) {
  auto v = i64(j, k);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}
std::optional<double> num(const json& j, const char* k) {
  const json* v = member(j, k);
  return v && v->is_number() ? std::optional<double>(v->get<double>()) : std::nullopt;
}
std::optional<bool> boolean(const json& j, const char* k) {
  const json* v = member(j, k);
  return v && v->is_boolean() ? std::optional<bool>(v->get<bool>()) : std::nullopt;
}
template <class T>
void put(json& j, const char* k, const std::optional<T>& v) {
  if (v) j[k] = *v;
}
void put(json& j, const char* k, const std::string& v) {
  if (!v.empty()) j[k] = v;
}
// "unlimited" or a number of bytes.
std::optional<int64_t> limit(const json& j, const char* k) {
  const json* v = member(j, k);
  if (v && v->is_string() && v->get<std::string>() == "unlimited") return -1;
  return i64(j, k);
}

}  // namespace

const std::vector<EvidenceKindInfo>& evidence_kinds() {
  static const std::vector<EvidenceKindInfo> kinds = build();
  return kinds;
}

const EvidenceKindInfo* find_evidence_kind(std::string_view kind) {
  const auto& ks = evidence_kinds();
  auto it = std::lower_bound(ks.begin(), ks.end(), kind, [](const EvidenceKindInfo& a, std::string_view b) { return a.kind < b; });
  return it != ks.end() && it->kind == kind ? &*it : nullptr;
}

std::optional<Layer> layer_of_evidence_kind(std::string_view kind) {
  if (const auto* k = find_evidence_kind(kind)) return k->layer;  // may be none (log facts)
  for (const auto& [prefix, layer] : kPrefixLayers)
    if (kind.substr(0, prefix.size()) == prefix) return layer;
  return std::nullopt;
}

std::string evidence_kinds_markdown() {
  std::string out =
      "# Evidence kinds\n\n"
      "Generated from the registry in `src/model/evidence_kinds.cpp` (`ccdiag/evidence_kinds.hpp`); "
      "`tests/unit/model_evidence_kinds.cpp` fails when this file is stale (it writes the fresh copy to the build "
      "directory). The JSON Schema of the same contract is `docs/schema/evidence-kinds.schema.json`.\n\n"
      "Every item: `kind`, `subject`, `availability` (a rule never reads a non-ok item as healthy), `provenance`, "
      "`data` with the fields below (**bold**: always present in an ok item). A missing or mistyped field makes a "
      "reader skip the item.\n\n"
      "| kind | layer | producer | reads on the host | subject | readers |\n|---|---|---|---|---|---|\n";
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  auto esc = [](std::string s) {
    std::string o;
    for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
    return o;
  };
  for (const auto& k : evidence_kinds())
    out += "| `" + k.kind + "` | " + (k.layer ? std::string(to_string(*k.layer)) : std::string("— (log fact)")) + " | " + k.producer + " | " + esc(join(k.host_paths)) +
           " | " + k.subject + " | " + join(k.readers) + " |\n";
  out += "\n## Data fields\n";
  for (const auto& k : evidence_kinds()) {
    out += "\n### `" + k.kind + "`\n\n" + k.doc + ".\n";
    if (k.fields.empty()) {
      out += "\nNo data fields are read.\n";
      continue;
    }
    out += "\n| field | type | meaning |\n|---|---|---|\n";
    for (const auto& f : k.fields)
      out += "| " + (f.required ? "**`" + f.name + "`**" : "`" + f.name + "`") + " | " + esc(f.type) + " | " + esc(f.doc) + " |\n";
  }
  return out;
}

nlohmann::json evidence_kinds_schema() {
  json cases = json::array();
  for (const auto& k : evidence_kinds()) {
    json props = json::object();
    json req = json::array();
    for (const auto& f : k.fields) {
      json types = json::array();
      std::string t = f.type;
      for (size_t at = 0; at != std::string::npos;) {
        const size_t bar = t.find('|', at);
        types.push_back(t.substr(at, bar == std::string::npos ? std::string::npos : bar - at));
        at = bar == std::string::npos ? bar : bar + 1;
      }
      props[f.name] = types.size() == 1 ? json{{"type", types[0]}, {"description", f.doc}}
                                        : json{{"type", types}, {"description", f.doc}};
      if (f.required) req.push_back(f.name);
    }
    json data{{"type", "object"}, {"properties", props}};
    if (!req.empty()) data["required"] = req;
    cases.push_back({{"if", {{"properties", {{"kind", {{"const", k.kind}}}, {"availability", {{"properties", {{"state", {{"const", "ok"}}}}}}}}},
                             {"required", {"kind", "availability"}}}},
                     {"then", {{"properties", {{"data", data}}}}}});
  }
  json kinds = json::array();
  for (const auto& k : evidence_kinds()) kinds.push_back(k.kind);
  return {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
          {"$id", "https://ccdiag.dev/schema/evidence-kinds.schema.json"},
          {"title", "ccdiag evidence item (generated from src/model/evidence_kinds.cpp)"},
          {"type", "object"},
          {"required", {"kind", "data"}},
          {"properties", {{"kind", {{"type", "string"}}}, {"data", {{"type", "object"}}}}},
          {"x-registered-kinds", kinds},
          {"allOf", cases}};
}

// --- typed views ------------------------------------------------------------

namespace contract {

PcieLink PcieLink::parse(const json& d) {
  PcieLink l;
  l.bdf = str(d, "bdf");
  l.role = str(d, "role");
  l.gpu_index = i32(d, "gpu_index");
  l.config_all_ones = boolean(d, "config_all_ones").value_or(false);
  l.path_resolved = boolean(d, "path_resolved").value_or(false);
  if (const json* p = member(d, "path"); p && p->is_array())
    for (const auto& h : *p) {
      if (!h.is_object()) continue;
      PcieHop hop;
      hop.bdf = str(h, "bdf");
      hop.hop = str(h, "hop");
      hop.current_gts = num(h, "current_link_speed_gts");
      hop.current_speed_unknown = h.contains("current_link_speed_gts") && h["current_link_speed_gts"].is_null();
      hop.max_gts = num(h, "max_link_speed_gts");
      hop.current_width = i32(h, "current_link_width");
      hop.max_width = i32(h, "max_link_width");
      l.path.push_back(std::move(hop));
    }
  return l;
}

json PcieLink::to_json() const {
  json p = json::array();
  for (const auto& h : path) {
    json j{{"bdf", h.bdf}};
    put(j, "hop", h.hop);
    if (h.current_gts) j["current_link_speed_gts"] = *h.current_gts;
    else if (h.current_speed_unknown) j["current_link_speed_gts"] = nullptr;
    put(j, "max_link_speed_gts", h.max_gts);
    put(j, "current_link_width", h.current_width);
    put(j, "max_link_width", h.max_width);
    p.push_back(std::move(j));
  }
  json j{{"bdf", bdf}, {"role", role}, {"path", p}, {"path_resolved", path_resolved}};
  put(j, "gpu_index", gpu_index);
  if (config_all_ones) j["config_all_ones"] = true;
  return j;
}

std::vector<PcieLink::Degraded> PcieLink::degraded() const {
  std::vector<Degraded> out;
  for (size_t i = 0; i < path.size(); ++i) {
    const PcieHop& h = path[i];
    Degraded d;
    d.hop = i;
    const bool widths = h.current_width && h.max_width;
    // Link down: speed "Unknown" or width 0 while the port has a maximum.
    if ((h.current_speed_unknown && h.max_gts) || (widths && *h.current_width == 0 && *h.max_width > 0)) {
      d.down = true;
      d.max_width = h.max_width.value_or(0);
      out.push_back(d);
      continue;
    }
    // A link trains to what both ends support: the smaller maximum of this
    // device and its upstream port.
    int max_w = h.max_width.value_or(0);
    double max_s = h.max_gts.value_or(0);
    if (i + 1 < path.size()) {
      const PcieHop& up = path[i + 1];
      if (up.max_width && *up.max_width > 0) max_w = std::min(max_w, *up.max_width);
      if (up.max_gts) max_s = std::min(max_s, *up.max_gts);
    }
    d.current_width = h.current_width.value_or(0);
    d.max_width = max_w;
    d.current_gts = h.current_gts.value_or(0);
    d.max_gts = max_s;
    d.lost_width = widths && *h.current_width < max_w;
    d.lost_speed = h.current_gts && h.max_gts && *h.current_gts + 1e-9 < max_s;
    if (d.lost_width || d.lost_speed) out.push_back(d);
  }
  return out;
}

PcieAcs PcieAcs::parse(const json& d) {
  PcieAcs a;
  a.bdf = str(d, "bdf");
  a.acs_capability = boolean(d, "acs_capability");
  a.req_redirect = boolean(d, "req_redirect");
  a.cmplt_redirect = boolean(d, "cmplt_redirect");
  a.on_p2p_path = boolean(d, "on_p2p_path");
  a.acs_ctl_text = str(d, "acs_ctl_text");
  return a;
}
json PcieAcs::to_json() const {
  json j{{"bdf", bdf}};
  put(j, "acs_capability", acs_capability);
  put(j, "req_redirect", req_redirect);
  put(j, "cmplt_redirect", cmplt_redirect);
  put(j, "on_p2p_path", on_p2p_path);
  put(j, "acs_ctl_text", acs_ctl_text);
  return j;
}

HostIommu HostIommu::parse(const json& d) { return HostIommu{str(d, "mode"), boolean(d, "translated")}; }
json HostIommu::to_json() const {
  json j{{"mode", mode}};
  put(j, "translated", translated);
  return j;
}

NvlinkLink NvlinkLink::parse(const json& d) {
  NvlinkLink l{i32(d, "link"), boolean(d, "active"), i32(d, "gpu_index"), str(d, "remote_bdf"), str(d, "remote_type"), {}};
  for (const char* key : {"counters_t0", "counters_t1"})
    if (const json* c = member(d, key); c && c->is_object())
      for (const auto& [name, v] : c->items())
        if (v.is_number_integer() || v.is_number_unsigned()) l.counters[name] = v.get<int64_t>();
  return l;
}
json NvlinkLink::to_json() const {
  json j = json::object();
  put(j, "link", link);
  put(j, "active", active);
  put(j, "gpu_index", gpu_index);
  put(j, "remote_bdf", remote_bdf);
  put(j, "remote_type", remote_type);
  if (!counters.empty()) j["counters_t0"] = counters;
  return j;
}

std::optional<GpuFabric> GpuFabric::of_device(const json& d) {
  const json* f = member(d, "fabric");
  if (!f || !f->is_object()) return std::nullopt;
  return GpuFabric{str(*f, "state_name"), i64(*f, "status"), str(*f, "status_name"), str(*f, "health_summary_name")};
}
json GpuFabric::to_json() const {
  json j = json::object();
  put(j, "state_name", state_name);
  put(j, "status", status);
  put(j, "status_name", status_name);
  put(j, "health_summary_name", health_summary_name);
  return j;
}

HostVersions HostVersions::parse(const json& d) {
  return HostVersions{str(d, "nccl_version"), str(d, "cuda_toolkit_version"), str(d, "driver_version"),
                      str(d, "user_driver_version")};
}
json HostVersions::to_json() const {
  json j{{"nccl_version", nccl_version}};
  put(j, "cuda_toolkit_version", cuda_toolkit_version);
  put(j, "driver_version", driver_version);
  put(j, "user_driver_version", user_driver_version);
  return j;
}

HostMemlock HostMemlock::parse(const json& d) { return HostMemlock{limit(d, "soft"), limit(d, "hard"), i64(d, "pid"), i64(d, "rank")}; }
json HostMemlock::to_json() const {
  json j = json::object();
  auto lim = [](int64_t v) { return v < 0 ? json("unlimited") : json(v); };
  if (soft_bytes) j["soft"] = lim(*soft_bytes);
  if (hard_bytes) j["hard"] = lim(*hard_bytes);
  put(j, "pid", pid);
  put(j, "rank", rank);
  return j;
}

HostPeermem HostPeermem::parse(const json& d) {
  return HostPeermem{boolean(d, "nvidia_peermem"), boolean(d, "nv_peer_mem_legacy"), boolean(d, "dmabuf_possible"),
                     boolean(d, "gdr_possible"), i64(d, "nvidia_gpus"), i64(d, "rdma_devices")};
}
json HostPeermem::to_json() const {
  json j = json::object();
  put(j, "nvidia_peermem", nvidia_peermem);
  put(j, "nv_peer_mem_legacy", nv_peer_mem_legacy);
  put(j, "dmabuf_possible", dmabuf_possible);
  put(j, "gdr_possible", gdr_possible);
  put(j, "nvidia_gpus", nvidia_gpus);
  put(j, "rdma_devices", rdma_devices);
  return j;
}

HostFabricManager HostFabricManager::parse(const json& d) {
  return HostFabricManager{boolean(d, "nvswitch_system"), boolean(d, "fabric_manager_running")};
}
json HostFabricManager::to_json() const {
  json j = json::object();
  put(j, "nvswitch_system", nvswitch_system);
  put(j, "fabric_manager_running", fabric_manager_running);
  return j;
}

RdmaPort RdmaPort::parse(const json& d) {
  return RdmaPort{str(d, "device"), i32(d, "port"), str(d, "state"), str(d, "phys_state"), str(d, "rate"), str(d, "link_layer")};
}
json RdmaPort::to_json() const {
  json j{{"device", device}};
  put(j, "port", port);
  put(j, "state", state);
  put(j, "phys_state", phys_state);
  put(j, "rate", rate);
  put(j, "link_layer", link_layer);
  return j;
}

RdmaCounters RdmaCounters::parse(const json& d) {
  RdmaCounters c;
  c.device = str(d, "device");
  c.port = i32(d, "port");
  c.sampled_twice = boolean(d, "sampled_twice").value_or(false);
  for (auto [key, dst] : {std::pair{"counters", &c.counters}, std::pair{"hw_counters", &c.hw_counters}}) {
    const json* m = member(d, key);
    if (!m || !m->is_object()) continue;
    for (const auto& [name, v] : m->items())
      if (v.is_object()) (*dst)[name] = RdmaCounter{i64(v, "t0"), i64(v, "t1"), i64(v, "delta")};
  }
  return c;
}
json RdmaCounters::to_json() const {
  json j{{"device", device}, {"sampled_twice", sampled_twice}};
  put(j, "port", port);
  for (auto [key, src] : {std::pair{"counters", &counters}, std::pair{"hw_counters", &hw_counters}}) {
    json m = json::object();
    for (const auto& [name, v] : *src) {
      json x = json::object();
      put(x, "t0", v.t0);
      put(x, "t1", v.t1);
      put(x, "delta", v.delta);
      m[name] = x;
    }
    j[key] = m;
  }
  return j;
}

RdmaQps RdmaQps::parse(const json& d) {
  RdmaQps q;
  if (const json* a = member(d, "qps"); a && a->is_array())
    for (const auto& o : *a)
      if (o.is_object())
        q.qps.push_back(RdmaQpEntry{str(o, "device"), str(o, "type"), str(o, "state"), i64(o, "lqpn"), i64(o, "port"),
                                    i64(o, "rqpn"), i64(o, "pid")});
  return q;
}
json RdmaQps::to_json() const {
  json a = json::array();
  for (const auto& q : qps) {
    json o{{"device", q.device}};
    put(o, "type", q.type);
    put(o, "state", q.state);
    put(o, "lqpn", q.lqpn);
    put(o, "port", q.port);
    put(o, "rqpn", q.rqpn);
    put(o, "pid", q.pid);
    a.push_back(std::move(o));
  }
  return {{"qps", a}, {"count", a.size()}};
}

NetLink NetLink::parse(const json& d) {
  return NetLink{str(d, "netdev"), str(d, "operstate"), str(d, "address"), i64(d, "mtu"), i64(d, "speed_mbps"),
                 i64(d, "carrier"), boolean(d, "virtual")};
}
json NetLink::to_json() const {
  json j{{"netdev", netdev}};
  put(j, "operstate", operstate);
  put(j, "address", address);
  put(j, "mtu", mtu);
  put(j, "speed_mbps", speed_mbps);
  put(j, "carrier", carrier);
  put(j, "virtual", is_virtual);
  return j;
}

}  // namespace contract

}  // namespace ccdiag
