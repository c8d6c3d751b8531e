#include "analysis/tree/log_cues.hpp"

#include "analysis/tree/literal_gate.hpp"
#include "ccdiag/text_scan.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace ccdiag {

namespace {

using L = Layer;
using S = Severity;
using R = FindingRole;

bool has(std::string_view s, std::string_view needle) { return s.find(needle) != std::string_view::npos; }


// NCCL source files by subsystem (the src/ tree of NCCL 2.18-2.27: the IB
// transport was split into transport/net_ib/*.cc in 2.23, the plugin loader
// moved to plugin/*.cc in 2.24). Prefix match on the path NCCL prints.
struct SourceArea {
  const char* prefix;
  Layer layer;
  const char* id;
  const char* subsystem;
  // Nudges (<= 3) for the causes behind a failure in this subsystem where one
  // kind of cause dominates: a bootstrap or socket failure is mostly the
  // host's network set-up, a shared-memory one the size of /dev/shm.
  std::vector<CauseSupport> supports = {};
};

const SourceArea kSources[] = {
    {"transport/net_ib", L::transport, "net_ib", "IB verbs network transport"},
    {"misc/ibvwrap", L::transport, "ibverbs", "verbs library calls"},
    {"misc/ibvsymbols", L::transport, "ibverbs", "verbs library calls"},
    {"transport/net_socket", L::transport, "net_socket", "socket network transport"},
    {"misc/socket", L::transport, "socket", "TCP sockets (bootstrap, proxy, socket transport)",
     {{"wrong_network_interface", 2}, {"firewall_blocked_ports", 1.5}}},
    {"include/socket", L::transport, "socket", "TCP sockets (bootstrap, proxy, socket transport)",
     {{"wrong_network_interface", 2}, {"firewall_blocked_ports", 1.5}}},
    {"bootstrap", L::transport, "bootstrap", "bootstrap (rendezvous of ranks over TCP)",
     {{"wrong_network_interface", 2.5}, {"firewall_blocked_ports", 1.5}}},
    {"transport/coll_net", L::transport, "collnet", "CollNet / SHARP network offload"},
    {"transport/net", L::transport, "net", "network transport (proxy side)"},
    {"transport/p2p", L::hardware, "p2p", "GPU peer-to-peer / CUDA IPC transport"},
    {"transport/shm", L::system_config, "shm", "shared-memory transport", {{"container_shm_too_small", 3}}},
    {"misc/shmutils", L::system_config, "shm", "shared-memory segments (/dev/shm)", {{"container_shm_too_small", 3}}},
    {"misc/ipcsocket", L::system_config, "ipc_socket", "CUDA IPC handle exchange over UNIX sockets"},
    {"transport/nvls", L::nccl, "nvls", "NVLink SHARP (NVLS)"},
    {"misc/cudawrap", L::system_config, "cuda_driver", "CUDA driver API"},
    {"misc/nvmlwrap", L::hardware, "nvml", "NVML (GPU management library)"},
    {"misc/gdrwrap", L::system_config, "gdrcopy", "GDRCopy"},
    {"misc/argcheck", L::framework, "argcheck", "argument checks of the NCCL API call", {{"user_code_bug", 2}}},
    {"plugin/", L::nccl, "net_plugin", "plugin loader"},
    {"net.cc", L::nccl, "net_plugin", "network plugin loader"},
    // A failure inside topology detection is NCCL rejecting its own picture of the machine: a release
    // that mishandles this topology, or a topology/graph file injected for another machine.
    {"graph/", L::nccl, "graph", "topology detection / graph search",
     {{"nccl_bug", 3}, {"nccl_config_error", 2}, {"pcie_topology_misdetected", 1.2}}},
    {"proxy", L::nccl, "proxy", "proxy thread"},
    {"enqueue", L::nccl, "enqueue", "collective enqueue"},
    {"init", L::nccl, "init", "communicator initialisation"},
    {"group", L::nccl, "group", "group calls"},
    {"channel", L::nccl, "core", "NCCL core"},
    {"transport", L::nccl, "core", "NCCL transport setup"},
    {"register", L::nccl, "core", "buffer registration"},
    {"misc/strongstream", L::nccl, "streams", "CUDA streams / graph capture"},
    {"ras/", L::nccl, "ras", "RAS subsystem"},
    {"misc/", L::nccl, "core", "NCCL core"},
};

struct TextCue {
  const char* id;
  std::vector<std::string_view> any;   // one must occur
  std::vector<std::string_view> all;   // every one must occur
  std::vector<std::string_view> none;  // none may occur
  Layer layer;
  const char* subsystem;
  Severity severity;
  FindingRole role;
  const char* summary;
  std::vector<CauseSupport> supports;
  std::vector<std::string_view> any2 = {};  // and one of these must occur (when non-empty)
};

// Mechanism-level messages and their layer. Weights are likelihood ratios
// estimated from the tuning part of the corpus where it has enough cases
// (docs/decision-tree.md, calibration); elsewhere 1.5-4, a nudge, not a verdict.
const std::vector<TextCue>& text_cues() {
  static const std::vector<TextCue> t = {
      // ---- nvidia-smi / NVML: the GPU is gone
      {"gpu_handle_lost", {"Unable to determine the device handle", "GPU is lost", "GPU requires reset"}, {}, {},
       L::hardware, "GPU presence", S::critical, R::primary,
       "nvidia-smi / NVML cannot reach a GPU (device handle lost): the GPU fell off the bus",
       {{"gpu_fell_off_bus", 40}}},
      {"nvsmi_err", {"ERR!"}, {}, {}, L::hardware, "GPU state", S::error, R::primary,
       "nvidia-smi shows ERR! for a GPU field: the GPU is in an error state", {{"gpu_fell_off_bus", 4}}},
      // ---- CUDA error names (runtime and driver)
      {"cuda_ecc", {"uncorrectable ECC error", "cudaErrorECCUncorrectable", "CUDA_ERROR_ECC_UNCORRECTABLE"}, {}, {},
       L::hardware, "GPU memory", S::critical, R::primary, "CUDA reported an uncorrectable ECC error",
       {{"gpu_ecc_or_memory_fault", 40}}},
      {"cuda_launch_failure", {"unspecified launch failure", "cudaErrorLaunchFailure", "CUDA_ERROR_LAUNCH_FAILED"}, {},
       {}, L::hardware, "GPU execution", S::error, R::symptom, "a GPU kernel failed (unspecified launch failure)",
       {{"gpu_hung_kernel", 2}, {"gpu_xid_nvlink_fault", 1.5}}},
      {"cuda_illegal_address", {"illegal memory access", "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS"}, {},
       {}, L::framework, "GPU execution", S::error, R::symptom, "a GPU kernel made an illegal memory access", {}},
      {"cuda_device_assert", {"device-side assert triggered", "cudaErrorAssert"}, {}, {}, L::framework,
       "user kernels", S::error, R::primary, "a device-side assert fired in user code", {{"user_code_bug", 20}}},
      // PyTorch's TORCH_INTERNAL_ASSERT: a check inside the framework's own code failed ("please report a bug
      // to PyTorch"); the framework code that drives NCCL is at fault, not the library or the host.
      // (Not its device-count check: more local ranks than GPUs is cuda_invalid_device below.)
      {"torch_internal_assert", {"INTERNAL ASSERT FAILED"}, {}, {"num_gpus"}, L::framework, "PyTorch internals", S::error,
       R::primary, "a PyTorch internal assert failed (a defect of the framework code that drives NCCL)",
       {{"user_code_bug", 6}, {"nccl_version_mismatch", 1.5}}},
      {"cuda_peer_unsupported",
       {"peer access is not supported", "cudaErrorPeerAccessUnsupported", "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"}, {}, {},
       L::hardware, "GPU peer-to-peer", S::error, R::primary, "CUDA reports peer access unsupported between two GPUs",
       {{"gpu_driver_p2p_bug", 8}, {"pcie_acs_p2p_blocked", 1.5}, {"iommu_blocks_p2p", 1.5}}},
      // torch's "Found no NVIDIA driver on your system" and nvidia-smi's "couldn't communicate with the
      // NVIDIA driver": no GPU reachable from this process or container (driver not loaded, no device
      // passed to the container), the host's set-up and not the script's.
      {"cuda_no_device",
       {"no CUDA-capable device is detected", "cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE", "Found no NVIDIA driver",
        "couldn't communicate with the NVIDIA driver", "no GPUs found",
        // ProcessGroupNCCL's own check (torch 2.x) on a host or container with no GPU visible
        "requires at least one CUDA device"},
       {}, {},
       L::system_config, "GPU visibility", S::error, R::primary, "the process sees no GPU", {}},
      // torch's own check before cudaSetDevice: "device >= 0 && device < num_gpus INTERNAL ASSERT FAILED ...
      // device=4, num_gpus=4" (more local ranks than visible GPUs).
      {"cuda_invalid_device",
       {"invalid device ordinal", "cudaErrorInvalidDevice", "CUDA_ERROR_INVALID_DEVICE", "device < num_gpus"}, {}, {},
       L::framework,
       "device binding", S::error, R::primary, "a rank asked for a GPU index that does not exist",
       {{"wrong_device_binding", 20}}},
      {"cuda_devices_busy", {"busy or unavailable", "cudaErrorDevicesUnavailable"}, {}, {}, L::framework,
       "device binding", S::error, R::primary, "the GPU is busy or exclusive to another process",
       {{"wrong_device_binding", 6}}},
      {"cuda_not_permitted", {"operation not permitted when stream is capturing", "cudaErrorStreamCaptureUnsupported",
                              "cudaErrorStreamCaptureInvalidated"},
       {}, {}, L::nccl, "CUDA graph capture", S::error, R::primary, "a call broke a CUDA graph capture",
       {{"cuda_graph_or_stream_misuse", 30}}},
      {"cuda_init_failed", {"cuInit failed", "CUDA_ERROR_NOT_INITIALIZED", "cudaErrorInitializationError",
                            "initialization error"},
       {}, {}, L::system_config, "CUDA driver", S::error, R::symptom, "the CUDA driver could not be initialised", {}},
      // ---- what a CUDA error inside NCCL means: the error name, not the fact that CUDA failed, decides
      // the layer. 'invalid argument' (cudaErrorInvalidValue) is a call the driver rejects: a library /
      // driver combination or an NCCL defect (fixed by another NCCL release in the corpus), not a GPU
      // fault; in NVLS set-up it is the multicast object the NVSwitch fabric would not create.
      // Only NCCL's own report of it: PyTorch's "CUDA error: invalid argument" is as often the user's kernel.
      {"cuda_invalid_value", {"Cuda failure 'invalid argument'", "Cuda failure 1 'invalid argument'",
                              "Cuda failure 'cudaErrorInvalidValue'"},
       {}, {"nvls", "NVLS"}, L::nccl, "CUDA call rejected", S::error, R::primary,
       "a CUDA call inside NCCL was rejected as invalid (library / driver combination or an NCCL defect, not a GPU "
       "fault)",
       {{"nccl_bug", 4}, {"driver_library_mismatch", 1.5}, {"gpu_hung_kernel", 0.3}}},
      {"nvls_cuda_failure", {"nvls.cc", "NVLS", "nvls"}, {"Cuda failure"}, {}, L::system_config,
       "NVLS multicast (NVSwitch fabric)", S::error, R::primary,
       "NVLink SHARP multicast set-up failed in a CUDA call: the NVSwitch fabric (fabric manager state) or the "
       "NVLS path",
       {{"fabric_manager_state", 14}, {"nvls_path_failure", 5}}},
      {"cuda_illegal_state", {"cannot be performed in the present state", "cudaErrorIllegalState",
                              "CUDA_ERROR_ILLEGAL_STATE"},
       {}, {}, L::system_config, "NVSwitch fabric", S::error, R::primary,
       "a multicast (NVLS) call found the NVSwitch fabric not in a usable state (fabric manager not running or not "
       "initialised)",
       {{"fabric_manager_not_running", 10}, {"fabric_manager_state", 4}},
       {"NVLS", "nvls", "NVLink SHARP", "Multicast", "multicast"}},
      {"cuda_invalid_handle", {"'invalid resource handle'", "cudaErrorInvalidResourceHandle",
                               "CUDA error: invalid resource handle"},
       {}, {}, L::framework, "CUDA device context", S::error, R::primary,
       "a CUDA stream or event was used on another device or context (the rank's current device is not the "
       "communicator's)",
       {{"wrong_device_binding", 4}, {"user_code_bug", 4}}},
      // NCCL's kernels ask for more shared memory per block than this GPU
      // allows (enqueue.cc, ncclInitKernelsForDevice): the release predates
      // the GPU (2.25 on consumer Blackwell, fixed in 2.26.2). The launch then
      // fails with 'invalid argument' or ncclSystemError.
      {"nccl_device_smem", {"exceeds device/fn maxSharedMem"}, {"ncclMaxSharedMem"}, {}, L::nccl,
       "kernel resources", S::error, R::primary,
       "NCCL's kernels need more shared memory than this GPU offers: this NCCL release does not support the GPU",
       {{"nccl_bug", 20}}},
      {"topology_search_failed", {"Failed to find reverse path", "Could not find a path for pattern",
                                  "Could not find a path", "no path found between"},
       {}, {}, L::nccl, "topology search", S::error, R::primary,
       "NCCL's topology search could not build a path through this machine's PCIe/NVLink layout (a topology this "
       "NCCL release mishandles)",
       {{"nccl_bug", 8}, {"pcie_topology_misdetected", 3}}},
      // ---- NCCL's own WARN texts, by what they say about the caller or the set-up (NCCL src/: misc/argcheck.cc,
      // init.cc, enqueue.cc, group.cc, graph/xml.cc, transport/net_ib/*.cc). These are checks NCCL makes on
      // what it was handed, so the message itself places the fault.
      {"nccl_api_misuse",
       {" is not a valid pointer", " argument is NULL", ": invalid root ", ": invalid type ",
        "invalid reduction operation", "unknown to this communicator", "corrupted comm object",
        "has already been destroyed", "without a matching recv", "without a matching send", "not in a group call",
        "improper usage of ncclCommInitRank", "Invalid rank requested", "nonblocking communicators are not allowed",
        "not initialized via NCCL_CONFIG_INITIALIZER", "supplied to user-created ncclRedOp_t"},
       {}, {}, L::framework, "NCCL API arguments", S::error, R::primary,
       "NCCL rejected the arguments of an API call (a NULL or host pointer, a bad root, type or op, a destroyed "
       "communicator): the caller's code",
       {{"user_code_bug", 8}, {"wrong_device_binding", 1.5}}},
      {"nccl_buffer_other_device", {"mismatchs with NCCL device", "mismatches with NCCL device"}, {}, {},
       L::framework, "device binding", S::error, R::primary,
       "a buffer handed to NCCL lives on another GPU than the communicator's: the rank's device binding",
       {{"wrong_device_binding", 20}}},
      {"nccl_invalid_device", {"totalnDev=", "exceeds ndev=", "Invalid device count requested"}, {}, {}, L::framework,
       "device binding", S::error, R::primary, "NCCL was asked for a GPU index or count this process does not have",
       {{"wrong_device_binding", 6}}},
      {"nccl_capture_mix", {"must either be all uncaptured or all captured", "can be CUDA graph captured"}, {}, {},
       L::nccl, "CUDA graph capture", S::error, R::primary,
       "captured and uncaptured streams or communicators were mixed in one NCCL group",
       {{"cuda_graph_or_stream_misuse", 30}}},
      // PyTorch's CUDAGraph capture_begin warns when NCCL work is still in
      // flight as a capture starts: captured and eager NCCL work interleave on
      // the same communicators. Harmless alone (it waits), a cause when a
      // collective then never completes.
      {"graph_capture_waits_on_nccl", {"pending NCCL work to finish before starting graph capture"}, {}, {}, L::nccl,
       "CUDA graph capture", S::warning, R::primary,
       "a CUDA graph capture started while NCCL work was pending: captured and eager collectives interleave",
       {{"cuda_graph_or_stream_misuse", 5}}},
      {"nccl_comm_id_invalid", {"Invalid NCCL_COMM_ID", "should not be called when NCCL_COMM_ID is set"}, {}, {},
       L::nccl, "NCCL settings", S::error, R::primary, "NCCL_COMM_ID is malformed or conflicts with the API use",
       {{"nccl_config_error", 8}, {"user_code_bug", 2}}},
      // A topology or graph XML NCCL cannot use: live detection writes well-formed XML with every
      // attribute, so a parse error, a version mismatch or a CPU node without arch/vendor comes from a
      // file someone injected (NCCL_TOPO_FILE, NCCL_GRAPH_FILE, an image's /etc/nccl.conf).
      {"nccl_topology_xml_unusable",
       {"XML Parse", "XML Topology has wrong version", "XML Graph has wrong version", "Could not open XML graph file",
        "XML Mismatch", "Unknown CPU architecture", "could not find CPU numa ID", "system node not found in XML"},
       {}, {}, L::nccl, "topology / graph XML", S::error, R::primary,
       "NCCL could not use a topology or graph XML (usually an injected NCCL_TOPO_FILE / NCCL_GRAPH_FILE that does "
       "not fit this machine)",
       {{"nccl_config_error", 6}, {"nccl_bug", 2}, {"pcie_topology_misdetected", 1.5}}},
      // graph/xml.h's attribute getters: a topology node NCCL built (or read) lacks an attribute it needs
      // ("Attribute busid of node nic not found"). Live detection fills every attribute from sysfs, so
      // either this release misreads this host's sysfs (a VM's or container's PCI tree, a new device
      // class) or an injected topology file left it out. torch prints it after "Last error:" without
      // the WARN prefix and source file, so the text itself must place it.
      {"nccl_topology_attr_missing", {"Attribute "}, {" of node ", " not found"}, {}, L::nccl, "topology XML",
       S::error, R::primary,
       "a node of NCCL's topology lacks an attribute NCCL needs (this release misreads the host's PCI tree, or an "
       "injected topology file omits it)",
       {{"nccl_bug", 3}, {"nccl_config_error", 2}, {"pcie_topology_misdetected", 1.2}}},
      // vLLM's and SGLang's custom all-reduce maps the other GPUs' buffers over CUDA IPC and reads them
      // peer-to-peer from its own kernels. A CUDA error raised there (custom_all_reduce.cuh / .cu) is the
      // P2P path failing under a kernel that otherwise works: P2P unsupported or broken between these GPUs
      // (driver, ACS, IOMMU), not the serving script; disabling the custom all-reduce avoids it.
      {"custom_allreduce_cuda_error", {"custom_all_reduce"}, {}, {}, L::hardware, "GPU peer-to-peer (CUDA IPC)",
       S::error, R::primary,
       "a CUDA error in the custom all-reduce kernel, which reads peer GPUs' memory over P2P: the P2P path between "
       "these GPUs fails",
       {{"gpu_driver_p2p_bug", 3}, {"pcie_acs_p2p_blocked", 2}, {"iommu_blocks_p2p", 2}},
       {"Cuda error", "CUDA error", "cuda error", "Cuda failure", "cudaError"}},
      {"nccl_mixed_net_counts", {"Detected mixed local Net device counts", "mixed local CollNet device counts"}, {},
       {}, L::transport, "RDMA devices per host", S::error, R::primary,
       "hosts of the job see different numbers of usable network devices (a NIC or port missing on some host)",
       {{"nic_port_down", 3}, {"unusable_hca_selected", 3}, {"net_plugin_mismatch", 1.5}}},
      {"nccl_ib_incompatible_devices",
       {"Attempted to connect incompatible devices", "device is incompatible with the local",
        "Attempted to merge incompatible devices"},
       {}, {}, L::transport, "HCA selection", S::error, R::primary,
       "NCCL paired NICs of different link types (IB with RoCE): the HCA selection mixes them",
       {{"unusable_hca_selected", 6}, {"nccl_config_error", 3}}},
      {"nccl_ib_device_unusable",
       {"NET/IB : Unable to open device", "NET/IB : Unable to query device", "NET/IB : Unable to query port"}, {},
       {}, L::transport, "HCA access", S::error, R::primary,
       "NCCL could not open or query an RDMA device it listed (not usable from this container or driver)",
       {{"unusable_hca_selected", 6}, {"nic_port_down", 1.5}}},
      {"nccl_ib_async_event", {"Got async event"}, {"NET/IB"}, {}, L::transport, "IB async events", S::error,
       R::primary, "the HCA raised an asynchronous error event (QP, CQ or port)",
       {{"qp_error_state", 3}, {"nic_link_flapping", 2}}},
      {"nccl_cuda_driver_too_old", {"CUDA Driver version found is"}, {"Minimum requirement"}, {}, L::system_config,
       "CUDA driver", S::error, R::primary, "the CUDA driver is older than this NCCL needs",
       {{"driver_library_mismatch", 10}}},
      {"nccl_nvls_forced_multi_rank_gpu", {"not compatible with NCCL_NVLS_ENABLE=1"}, {}, {}, L::nccl,
       "NCCL settings", S::error, R::primary, "NCCL_NVLS_ENABLE=1 forced on ranks that share a GPU",
       {{"nccl_config_error", 8}, {"wrong_device_binding", 3}}},
      {"fabric_manager_version", {"don't match with driver version", "does not match with driver version",
                                  "fabric manager version mismatch"},
       {}, {}, L::system_config, "fabric manager", S::error, R::primary,
       "the fabric manager refuses to start: its version does not match the GPU driver",
       {{"fabric_manager_not_running", 40}}},
      // The fabric manager's own log (fabricmanager.log) refusing an NVLS multicast team that NCCL asked
      // for ("[ERROR] ... failed to find the GPU handle ... in the multicast team request setup"): the
      // NVLS path of this GPU set, or the fabric manager's state.
      {"fabric_manager_multicast_team", {"multicast team"}, {"ERROR"}, {}, L::nccl, "NVLS multicast (fabric manager)",
       S::error, R::primary,
       "the fabric manager rejected an NVLink SHARP multicast team set-up (the NVLS path for this GPU set, or "
       "the fabric manager's state)",
       {{"nvls_path_failure", 5}, {"fabric_manager_state", 3}, {"nccl_bug", 1.5}}},
      // ---- ncclResult strings
      {"nccl_system_error", {"unhandled system error", "ncclSystemError"}, {}, {}, L::transport, "system call",
       S::error, R::symptom, "NCCL: a system call failed (network, shared memory or files)", {}},
      {"nccl_cuda_error", {"unhandled cuda error", "ncclUnhandledCudaError"}, {}, {}, L::hardware, "CUDA call",
       S::error, R::symptom, "NCCL: a CUDA call failed", {}},
      {"nccl_internal_error", {"internal error", "ncclInternalError"}, {}, {}, L::nccl, "NCCL core", S::error,
       R::symptom, "NCCL: internal error", {}},
      {"nccl_invalid_usage", {"invalid usage", "ncclInvalidUsage", "invalid argument", "ncclInvalidArgument"}, {},
       {"Invalid argument", "Cuda failure", "Cuda error", "CUDA error", "cuda error", "cudaError", "CUDA_ERROR"},
       L::framework, "API usage", S::error, R::symptom,
       "NCCL: the caller used the API wrongly (invalid usage / argument)", {{"user_code_bug", 2}}},
      {"nccl_remote_error", {"remote process exited or there was a network error", "ncclRemoteError"}, {}, {},
       L::transport, "peer", S::warning, R::cascade, "NCCL: a remote peer failed or the network dropped", {}},
      // ---- errno texts
      // Socket failures between ranks are symptoms; behind them, in real incidents, mostly the host's
      // network configuration: the interface NCCL/Gloo advertised, a firewall, the host name's address.
      // Nudges (1.5-3) so that a deeper cause supported elsewhere can take over from the symptom.
      {"errno_conn_refused", {"Connection refused", "ECONNREFUSED"}, {}, {}, L::transport, "TCP", S::error, R::symptom,
       "a TCP connection was refused",
       {{"wrong_network_interface", 2}, {"hostname_resolves_to_loopback", 1.5}, {"firewall_blocked_ports", 1.5}}},
      {"errno_timed_out", {"Connection timed out", "ETIMEDOUT"}, {}, {"ibv_", "NET/IB", "QP to RT", "modify QP"},
       L::transport, "TCP", S::error,
       R::symptom, "a TCP connection timed out", {{"firewall_blocked_ports", 3}, {"wrong_network_interface", 2}}},
      {"errno_unreachable", {"No route to host", "Network is unreachable", "EHOSTUNREACH", "ENETUNREACH"}, {}, {},
       L::system_config, "routing", S::error, R::symptom, "no route to the peer",
       // firewalld / iptables REJECT answers with icmp-host-prohibited, which connect() reports as EHOSTUNREACH
       {{"firewall_blocked_ports", 3}, {"wrong_network_interface", 3}}},
      {"errno_nodev", {"No such device", "ENODEV"}, {}, {"nvidia-smi"}, L::transport, "devices", S::error, R::symptom,
       "a device call failed with ENODEV", {}},
      // ---- verbs calls failing, in any library's wording (UCX "ibv_create_cq(cqe=4096) failed: ...",
      // tensorpipe "In operator() at tensorpipe/common/ibv.h:172", rdma-core, MPI). NCCL's own "Call to
      // ibv_X failed with error Y" lines have signatures of their own (signature_catalogue.cpp).
      // ENOMEM from a verbs *allocation* (QP, CQ, PD, MR, SRQ, AH) is RLIMIT_MEMLOCK: the verbs
      // provider pins these buffers (DMA-BUF registration is exempt: it pins nothing).
      {"verbs_alloc_nomem",
       {"ibv_create_qp", "ibv_create_cq", "ibv_reg_mr", "ibv_create_srq", "ibv_alloc_pd", "ibv_create_ah",
        "ibv_create_comp_channel", "ibv_exp_create", "ibv_alloc_dm"},
       {}, {"Call to ibv_", "ibv_reg_dmabuf_mr"}, L::system_config, "locked memory (RLIMIT_MEMLOCK)", S::error,
       R::primary, "a verbs allocation failed with ENOMEM: the locked-memory limit is too low for the HCA's buffers",
       {{"memlock_limit_too_low", 8}}, {"Cannot allocate memory", "ENOMEM", "errno 12", "errno: 12", "errno=12"}},
      // A queue pair's move to ready-to-receive/-send timing out (any library's wording; NCCL's own has a
      // signature): the address path to the peer's NIC does not resolve (another rail or subnet, a GID
      // that does not route), not a TCP connection.
      {"verbs_qp_transition_timeout", {"QP to RTR", "QP to RTS", "ibv_modify_qp"}, {}, {"Call to ibv_modify_qp"},
       L::transport, "IB verbs connection set-up", S::error, R::primary,
       "a queue pair could not be moved to ready (timed out): the peer's NIC is not reachable on the path in use",
       {{"nic_pair_unreachable", 4}, {"roce_gid_index_mismatch", 2}},
       {"Connection timed out", "ETIMEDOUT", "errno: 110", "errno 110"}},
      // A verbs call the device does not support or cannot serve at all: the device in use is not an
      // RDMA-capable one from here (an Ethernet NIC without RoCE, a VF or container without the
      // device, a soft-RoCE/iWARP device lacking the operation).
      {"verbs_unsupported", {"ibv_", "ibv.h", "ibverbs", "uct_ib", "ib_iface", "ib_md.c", "ib_device.c"}, {},
       {"Call to ibv_modify_qp", "nvidia-smi", "Failed to open libibverbs"}, L::transport, "IB verbs device", S::error,
       R::primary, "a verbs call is not supported by, or cannot reach, the RDMA device in use",
       {{"unusable_hca_selected", 6}},
       {"Operation not supported", "EOPNOTSUPP", "Function not implemented", "ENOSYS", "No such device", "ENODEV",
        "Protocol not supported", "errno 95", "errno: 95"}},
      {"errno_nomem", {"Cannot allocate memory", "ENOMEM"}, {}, {}, L::system_config, "memory", S::error, R::symptom,
       "a call failed with ENOMEM", {}},
      {"shm_segment_no_space", {"shared memory", "posix_fallocate", "/dev/shm", "shm"}, {"No space left"}, {},
       L::system_config, "shared memory (/dev/shm)", S::error, R::primary,
       "a shared-memory segment could not be created or grown (ENOSPC): /dev/shm is too small",
       {{"container_shm_too_small", 40}}},
      {"errno_nospace", {"No space left on device", "ENOSPC"}, {}, {"shared memory", "posix_fallocate", "shm"},
       L::system_config, "storage", S::error, R::symptom, "no space left on a device", {}},
      {"hostname_loopback", {"loopback"}, {"resolve"}, {}, L::system_config, "name resolution", S::error, R::primary,
       "the host name resolved to no routable address; a loopback address was used instead",
       {{"hostname_resolves_to_loopback", 30}}},
      // A connection to a loopback peer. NCCL advertises the address of the interface it picked (so lo was
      // picked: the interface filter); Gloo and the c10d store advertise what the host name resolves to.
      {"loopback_peer_nccl", {"remote=[127.", "to 127.0.", "127.0.1.1"},
       {}, {"Bootstrap : Using", "Gloo", "gloo", "TCPStore", "c10d"}, L::system_config, "interface selection",
       S::error, R::primary, "an NCCL connection went to a loopback address: the interface NCCL advertised is lo",
       {{"wrong_network_interface", 8}, {"hostname_resolves_to_loopback", 3}}},
      {"loopback_peer", {"remote=[127.", "to 127.0.", "127.0.1.1"}, {}, {"Bootstrap : Using"}, L::system_config,
       "name resolution", S::error, R::primary,
       "a Gloo / c10d connection went to a loopback address: the host name resolves to loopback",
       {{"hostname_resolves_to_loopback", 8}}, {"Gloo", "gloo", "TCPStore", "c10d"}},
      {"errno_too_many_files", {"Too many open files", "EMFILE"}, {}, {}, L::system_config, "limits", S::error,
       R::primary, "the open-file limit is exhausted", {}},
      {"errno_addr_in_use", {"Address already in use", "EADDRINUSE"}, {}, {}, L::framework, "ports", S::error,
       R::primary, "a listening port is already taken (another job or a stale rank)", {}},
      // ---- ibv_wc_status names (any NCCL version or plugin)
      // UCX's mlx5 transports word the same completion "Transport retry count exceeded on mlx5_0:1/RoCE".
      {"ibv_wc_retry",
       {"IBV_WC_RETRY_EXC_ERR", "transport retry counter exceeded", "Transport retry count exceeded",
        "transport retry count exceeded"},
       {}, {}, L::transport, "IB transport", S::error, R::symptom,
       "IB transport retries exhausted (the peer NIC did not acknowledge)", {}},
      // UCX's unreliable-datagram transport keeps its own retransmission: when the peer never acknowledges,
      // the endpoint times out (ud_ep.c "UD endpoint ... unhandled timeout error", ud_iface.c "transport
      // error: Endpoint timeout", UCS_ERR_ENDPOINT_TIMEOUT). It is the UD form of RC's retry exhaustion:
      // the peer NIC is unreachable over the fabric (on RoCE mostly a GID index that does not route).
      {"ucx_endpoint_timeout", {"Endpoint timeout", "unhandled timeout error", "UCS_ERR_ENDPOINT_TIMEOUT"}, {}, {},
       L::transport, "UCX transport", S::error, R::symptom,
       "a UCX endpoint timed out: the peer NIC never acknowledged (the fabric path to it does not work)",
       {{"ib_transport_retry_exceeded", 10}}, {"ud_", "UD endpoint", "UCX", "ucx", "uct", "ucp", "transport error"}},
      {"ibv_wc_other", {"IBV_WC_LOC_", "IBV_WC_REM_", "IBV_WC_RNR_", "IBV_WC_GENERAL_ERR", "IBV_WC_FATAL_ERR"}, {}, {},
       L::transport, "IB transport", S::error, R::symptom, "an RDMA work request completed with an error", {}},
      // ("transport error" holds "port error" too.)
      {"ibv_async_port", {"IBV_EVENT_PORT_ERR", "port error", "LINK_DOWN", "link down", "Link down"}, {},
       {"transport error", "Transport error"},
       L::hardware, "NIC port", S::error, R::primary, "a NIC port went down", {{"nic_link_flapping", 4}}},
      // ---- interface choice
      // Gloo's TCP device enforces that GLOO_SOCKET_IFNAME names an interface with an address (and, with
      // no interface named, that the host name gives a bindable address): a name that exists on no
      // host or another host's interface name ends init_process_group on every rank of that host.
      // The enforce's own condition tells which lookup failed (gloo/transport/tcp/device.cc): "ifa != nullptr"
      // is the interface named by GLOO_SOCKET_IFNAME (no such interface, or none with an address of the
      // family), "rp != nullptr" the host name (no address it resolves to can be bound on this host).
      {"gloo_iface_no_address", {"Unable to find address for"}, {}, {"ifa != nullptr", "rp != nullptr"},
       L::system_config, "interface selection", S::error, R::primary,
       "Gloo found no address for the interface (or host name) it was told to use",
       {{"wrong_network_interface", 30}, {"hostname_not_resolvable", 3}}},
      {"gloo_iface_missing", {"ifa != nullptr"}, {"Unable to find address for"}, {}, L::system_config,
       "interface selection", S::error, R::primary,
       "the interface GLOO_SOCKET_IFNAME names does not exist on this host or has no address",
       {{"wrong_network_interface", 100}}},
      {"gloo_hostname_unbindable", {"rp != nullptr"}, {"Unable to find address for"}, {}, L::system_config,
       "name resolution", S::error, R::primary,
       "no address the host name resolves to can be bound on this host (the name resolves elsewhere or not at all)",
       {{"hostname_not_resolvable", 30}, {"wrong_network_interface", 2}}},
      // NCCL's socket transport (and its bootstrap list) spreads connections over every interface it
      // lists; one that exists only on this host (a container veth, a docker/libvirt bridge) or has
      // only an IPv6 link-local address cannot reach the peers, so some connections hang or fail.
      {"socket_iface_not_routable", {"NET/Socket : Using", "Bootstrap : Using", "Bootstrap: Using"}, {"[1]"}, {},
       L::system_config, "interface selection", S::warning, R::primary,
       "NCCL uses several interfaces, one of them host-local (veth, bridge) or IPv6 link-local: connections "
       "over it cannot reach other hosts",
       {{"wrong_network_interface", 6}}, {"veth", "docker", "virbr", "fe80::", "cni", "flannel"}},
      // A rendezvous store key never set within the wait (Gloo's store, Horovod's HTTP store, c10d):
      // at start-up most often ranks that reach the rendezvous later than its (short) timeout at scale.
      {"store_wait_timeout", {"Wait timeout for key", "Wait timeout after"}, {}, {}, L::framework,
       "rendezvous store", S::error, R::symptom, "a rendezvous store wait timed out: a key another rank should set never came",
       {{"straggler_or_timeout_too_short", 4}, {"rank_process_died", 1.5}}, {"gloo", "store", "Store"}},
      // ---- framework idioms in tracebacks
      // "The main process first" context managers (transformers/accelerate main_process_first, YOLO's
      // torch_distributed_zero_first): every other rank waits in a barrier while the main one
      // preprocesses (tokenises, downloads, builds a cache). A failure raised through one is that
      // barrier giving up on a busy main rank, not a deadlock.
      {"main_process_first_barrier", {"main_process_first", "distributed_zero_first", "rank_zero_first"}, {}, {},
       L::framework, "rank-0-first barrier", S::warning, R::primary,
       "the failing rank waited in a rank-0-first barrier (main_process_first / torch_distributed_zero_first) "
       "while the main rank preprocessed",
       {{"straggler_or_timeout_too_short", 6}}},
      // ---- service mesh: a sidecar proxy (Istio's envoy) injected into training pods intercepts their
      // TCP ports; rendezvous and NCCL/Gloo connections are accepted by the proxy and closed or never
      // forwarded, which looks like a blocked port.
      {"service_mesh_sidecar", {"envoy", "istio-proxy", "istio"},
       {}, {}, L::system_config, "service mesh (sidecar proxy)", S::error, R::primary,
       "a service-mesh sidecar (Istio / envoy) proxies the pod's connections: the job's ports are intercepted",
       {{"firewall_blocked_ports", 10}},
       {"remote early close", "upstream connect error", "inbound|", "outbound|", "connection termination",
        "upstream_reset"}},
      // ---- PyTorch distributed exception classes
      {"dist_network_error", {"DistNetworkError"}, {}, {}, L::transport, "c10d store / rendezvous", S::error, R::symptom,
       "PyTorch could not reach the rendezvous store (DistNetworkError)", {}},
      {"dist_store_error", {"DistStoreError"}, {}, {}, L::framework, "c10d store", S::error, R::symptom,
       "a c10d store operation failed or timed out (DistStoreError)", {}},
      {"dist_backend_error", {"DistBackendError"}, {}, {}, L::nccl, "process-group backend", S::error, R::symptom,
       "the NCCL process-group backend failed (DistBackendError)", {}},
      {"child_failed", {"ChildFailedError"}, {}, {}, L::framework, "torchrun", S::error, R::symptom,
       "torchrun reported a failed worker (ChildFailedError)", {}},
      // ---- aws-ofi-nccl / libfabric
      {"ofi_warn", {"NET/OFI"}, {}, {"NCCL INFO"}, L::nccl, "aws-ofi-nccl plugin", S::error, R::primary,
       "the aws-ofi-nccl network plugin (libfabric) reported a failure", {{"net_plugin_mismatch", 3}}},
      {"libfabric_error", {"fi_getinfo", "fi_domain", "fi_endpoint", "fi_av_", "fi_mr_reg", "libfabric:"}, {},
       {"NCCL INFO"}, L::nccl, "libfabric", S::error, R::symptom, "a libfabric call failed", {}},
      // ---- NVSHMEM (DeepEP, internode MoE kernels): its IB / IBGDA transports need GPU memory registered with
      // the HCA; a transport map that cannot be built is most often GPUDirect RDMA missing on that node
      {"nvshmem_transport_map", {"building transport map failed", "transport map failed", "nvshmemt_init failed",
                                 "Unable to initialize any transports"},
       {}, {}, L::system_config, "NVSHMEM transports", S::error, R::primary,
       "NVSHMEM could not build its transports (IB/IBGDA need GPUDirect RDMA: nvidia-peermem or DMA-BUF)",
       {{"gpudirect_rdma_module_missing", 15}, {"unusable_hca_selected", 2}}},
      // ---- SIGBUS: a store to a mapped file beyond its backing, which for a process running NCCL is a
      // /dev/shm segment the tmpfs could not back (shm is sized lazily; a full tmpfs raises SIGBUS)
      {"sigbus", {"Bus error", "SIGBUS", "signal 7 ("}, {}, {}, L::system_config, "shared memory (/dev/shm)",
       S::error, R::primary, "a process died of SIGBUS (a mapped /dev/shm segment could not be backed)",
       {{"container_shm_too_small", 25}}},
      // PyTorch's DataLoader names "insufficient shared memory (shm)" when a worker dies of SIGBUS; the NCCL
      // SHM transport of the same container has the same small tmpfs.
      {"dataloader_shm_insufficient", {"insufficient shared memory (shm)"}, {}, {}, L::system_config,
       "shared memory (/dev/shm)", S::error, R::primary,
       "a DataLoader worker ran out of shared memory: /dev/shm is too small", {{"container_shm_too_small", 12}}},
      // ---- POSIX shared memory pulled away: segments that vanish while in use, and systemd-logind
      // sessions of the job's user ending (RemoveIPC=yes deletes that user's segments then)
      {"shm_vanished", {"unlinked", "could not attach", "ATTACH_MISSING", "No such file or directory"},
       {"shared memory"}, {}, L::system_config, "shared memory (/dev/shm)", S::error, R::primary,
       "a shared-memory segment disappeared while processes still used it",
       {{"removeipc_deletes_shm", 6}, {"container_shm_too_small", 1.5}}},
      {"logind_session_removed", {"Removed session"}, {}, {}, L::system_config, "systemd-logind", S::warning,
       R::primary, "a login session of the user ended (systemd-logind): with RemoveIPC=yes its shm goes with it",
       {{"removeipc_deletes_shm", 8}}},
      // ---- a rank visibly busy preparing data (tqdm bars of tokenisation, dataset maps, downloads,
      // checkpoint loading) in the log of a job that timed out: a straggler, not a deadlock. At >= 10 it is
      // a specific mechanism, so the watchdog-without-error guess (a skipped collective) yields to it.
      {"data_preparation_progress",
       {"tokeniz", "Tokeniz", "Map", "map", "dataset", "Dataset", "preprocess", "Preprocess", "Loading", "Download",
        "Filter", "Grouping texts", "Converting format"},
       // A bar at 100% is work that finished; a rank still busy shows one below it.
       {"%|"}, {"Processed prompts", "Epoch", "Training", "training", "step", "Step", "100%|"}, L::framework,
       "data preparation", S::info, R::primary,
       "a rank was busy preparing data (tokenising, mapping a dataset, loading or downloading) while others waited",
       {{"straggler_or_timeout_too_short", 12}}},
      // ---- pasted diagnostic blocks
      {"ibstat_port_down", {"State: Down", "state: PORT_DOWN", "state:\t\t\tPORT_DOWN", "1: DOWN",
                            "Physical state: Disabled", "Physical state: Polling", "phys_state: POLLING",
                            "phys_state:\t\tDISABLED", "phys state:\t 2: Polling", "phys state:\t 3: Disabled"},
       {}, {}, L::transport, "HCA port state (ibstat / ibv_devinfo)", S::warning, R::primary,
       "a pasted port state shows an HCA port down", {{"unusable_hca_selected", 4}, {"nic_link_flapping", 1.5}}},
      // ibdev2netdev: "mlx5_0 port 1 ==> ib0 (Down)"
      {"ibdev2netdev_down", {"(Down)"}, {"==>", "port"}, {}, L::transport, "HCA port state (ibdev2netdev)",
       S::warning, R::primary, "a pasted ibdev2netdev shows an HCA port down",
       {{"unusable_hca_selected", 4}, {"nic_link_flapping", 1.5}}},
      // nvidia-smi nvlink -s: "Link 3: <inactive>"
      {"nvlink_inactive", {"<inactive>"}, {"Link "}, {}, L::hardware, "NVLink state (nvidia-smi nvlink -s)",
       S::warning, R::primary, "a pasted nvidia-smi nvlink status shows an inactive NVLink",
       {{"nvlink_down_or_degraded", 10}, {"gpu_xid_nvlink_fault", 2}}},
      // lspci -vv marks a link status below the link's capability "(downgraded)" (pciutils >= 3.6). A
      // narrower link than the slot trained to is a fault (a seating, riser or retimer problem); a lower
      // speed alone is also what an idle GPU's power saving shows, so it is only a nudge.
      {"pcie_width_downgraded",
       {"Width x1 (downgraded)", "Width x2 (downgraded)", "Width x4 (downgraded)", "Width x8 (downgraded)"},
       {"LnkSta"}, {}, L::hardware, "PCIe link (lspci -vv)", S::warning, R::primary,
       "a pasted lspci shows a PCIe link trained narrower than it is capable of", {{"pcie_link_degraded", 8}}},
      {"pcie_speed_downgraded", {"(downgraded)"}, {"LnkSta"},
       {"Width x1 (downgraded)", "Width x2 (downgraded)", "Width x4 (downgraded)", "Width x8 (downgraded)"},
       L::hardware, "PCIe link (lspci -vv)", S::info, R::symptom,
       "a pasted lspci shows a PCIe link below its capable speed (also an idle GPU's power saving: read it under load)",
       {{"pcie_link_degraded", 1.5}}},
      {"ulimit_memlock", {"max locked memory"}, {}, {"unlimited"}, L::system_config, "limits (ulimit -a)",
       S::warning, R::primary, "the locked-memory limit is finite", {{"memlock_limit_too_low", 15}}},
      {"iommu_fault", {"DMAR: DRHD: handling fault", "DMAR: [DMA", "IO_PAGE_FAULT", "AMD-Vi: Event logged",
                       "iommu fault", "IOMMU fault"},
       {}, {}, L::hardware, "IOMMU (dmesg)", S::error, R::primary, "the IOMMU blocked a DMA (translation fault)",
       {{"iommu_blocks_p2p", 20}}},
      {"acs_enabled", {"SrcValid+"}, {"ACSCtl"}, {}, L::hardware, "PCIe ACS (lspci)", S::warning, R::primary,
       "ACS source validation is on at a PCIe bridge (P2P TLPs are redirected)", {{"pcie_acs_p2p_blocked", 10}}},
      {"pcie_aer", {"AER:", "PCIe Bus Error"}, {}, {}, L::hardware, "PCIe (dmesg)", S::error, R::symptom,
       "the kernel logged a PCIe bus error (AER)", {}},
      {"fabric_manager_down", {"nvidia-fabricmanager"}, {}, {}, L::system_config, "fabric manager", S::warning,
       R::symptom, "the NVSwitch fabric manager is mentioned in a failure context", {}},
  };
  return t;
}

bool matches(const TextCue& c, const LineText& line) {
  if (!c.any.empty() && std::none_of(c.any.begin(), c.any.end(), [&](std::string_view a) { return line.has(a); }))
    return false;
  for (std::string_view a : c.all)
    if (!line.has(a)) return false;
  for (std::string_view n : c.none)
    if (line.has(n)) return false;
  if (!c.any2.empty() && std::none_of(c.any2.begin(), c.any2.end(), [&](std::string_view a) { return line.has(a); }))
    return false;
  return true;
}

bool path_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '/' || c == '.'; }

}  // namespace

std::optional<std::string> nccl_source_file(std::string_view line) {
  // "<file>.cc:<line> NCCL WARN" (WARN lines) or "NCCL INFO <file>.cc:<line> -> <code>" (breadcrumbs);
  // NCCL <= 2.8 wrote .cu files and "[dev] include/socket.h:371 WARN" without the word NCCL.
  const bool warn = has(line, " WARN ") || has(line, "NCCL WARN");
  const bool crumb = has(line, "INFO ") && has(line, " -> ");
  if (!warn && !crumb) return std::nullopt;
  for (std::string_view ext : {".cc:", ".cu:", ".h:"}) {
    for (size_t at = line.find(ext); at != std::string_view::npos; at = line.find(ext, at + 1)) {
      size_t b = at;
      while (b > 0 && path_char(line[b - 1])) --b;
      while (b < at && !std::isalnum(static_cast<unsigned char>(line[b]))) ++b;  // "_ibvwrap.cc" in Markdown
      if (b == at) continue;
      const size_t e = at + ext.size();
      if (e < line.size() && !std::isdigit(static_cast<unsigned char>(line[e])) && line[e] != ' ') continue;
      return std::string(line.substr(b, at + ext.size() - 1 - b));
    }
  }
  return std::nullopt;
}

namespace {

// "transport/net_ib/connect.cc" -> matches "transport/net_ib"; a bare
// "ibvwrap.cc" (a path cut in a paste) matches by the area's last component.
const SourceArea* source_area(std::string path) {
  if (const size_t s = path.rfind("src/"); s != std::string::npos) path = path.substr(s + 4);
  const bool bare = path.find('/') == std::string::npos;
  for (const auto& a : kSources) {
    const std::string_view prefix = a.prefix;
    if (path.rfind(prefix, 0) == 0) return &a;
    if (bare) {
      const size_t slash = prefix.rfind('/');
      const std::string_view last = slash == std::string_view::npos ? prefix : prefix.substr(slash + 1);
      if (!last.empty() && path.rfind(last, 0) == 0) return &a;
    }
  }
  return nullptr;
}

bool nccl_tests_file(std::string_view path) { return path.rfind("common.c", 0) == 0; }

}  // namespace

namespace {

// The literals one of which each cue of the table needs: one of its "any"
// literals, or its longest "all" literal (every one must occur).
std::vector<std::vector<std::string_view>> cue_needles() {
  std::vector<std::vector<std::string_view>> needles;
  for (const auto& c : text_cues()) {
    if (c.all.empty()) {
      needles.push_back(c.any);
      continue;
    }
    std::string_view longest;
    for (std::string_view a : c.all)
      if (a.size() > longest.size()) longest = a;
    needles.push_back({longest});
  }
  return needles;
}

}  // namespace

const LiteralGate& cue_gate() {
  static const LiteralGate& gate = *new LiteralGate(cue_needles());  // never destroyed, as signal_gate()
  return gate;
}

std::vector<LogCue> line_cues(const LineText& indexed) {
  const std::string_view line = indexed.text();
  std::vector<LogCue> out;
  const bool may_name_source = indexed.has(" WARN ") || indexed.has("NCCL WARN") || indexed.has(" -> ");
  if (auto src = may_name_source ? nccl_source_file(line) : std::nullopt; src && !nccl_tests_file(*src)) {
    if (const SourceArea* a = source_area(*src)) {
      const bool warn = has(line, "WARN");
      out.push_back(LogCue{std::string("nccl_src.") + a->id, a->layer, a->subsystem, warn ? S::error : S::warning,
                           R::symptom,
                           std::string("NCCL ") + (warn ? "warning" : "error") + " from " + *src + " (" +
                               a->subsystem + ")",
                           a->supports});
    }
  }
  // `df -h /dev/shm` (or `df -h` with a /dev/shm row): a size under 1 GiB is the container default
  // (64M for Docker) or close to it, too small for NCCL's SHM segments at scale.
  if (indexed.has("/dev/shm") && (line.rfind("shm", 0) == 0 || line.rfind("tmpfs", 0) == 0 ||
                                line.rfind("none", 0) == 0 || line.rfind("overlay", 0) == 0)) {
    size_t i = line.find_first_of(" \t");
    while (i != std::string_view::npos && i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      size_t e = i;
      while (e < line.size() && line[e] != ' ' && line[e] != '\t') ++e;
      const std::string_view tok = line.substr(i, e - i);
      if (tok.size() >= 2 && (tok.back() == 'M' || tok.back() == 'K') &&
          std::all_of(tok.begin(), tok.end() - 1, [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; }) &&
          (tok.back() == 'K' || std::atof(std::string(tok.substr(0, tok.size() - 1)).c_str()) < 1024)) {
        out.push_back(LogCue{"df_dev_shm_small", L::system_config, "shared memory (df -h /dev/shm)", S::warning,
                             R::primary, "a pasted df shows /dev/shm under 1 GiB (" + std::string(tok) + ")",
                             {{"container_shm_too_small", 10}}});
        break;
      }
      if (tok.size() >= 2 && tok.back() == 'G') break;  // the size column is in GiB: large enough
      i = e;
    }
  }
  // Ray's object store measures /dev/shm and falls back to /tmp when it "has only N bytes available"; under
  // 1 GiB that is a container's default tmpfs (no --shm-size / --ipc=host), the one NCCL's SHM segments
  // live in. A larger figure only means less than Ray wanted.
  if (const size_t at = indexed.has("/dev/shm has only") ? line.find("/dev/shm has only ") : std::string_view::npos;
      at != std::string_view::npos) {
    size_t i = at + std::string_view("/dev/shm has only ").size(), e = i;
    while (e < line.size() && e - i < 19 && std::isdigit(static_cast<unsigned char>(line[e]))) ++e;
    if (e > i && line.substr(e, 6) == " bytes" && std::strtoull(std::string(line.substr(i, e - i)).c_str(), nullptr, 10) < (1ull << 30))
      out.push_back(LogCue{"shm_size_reported_small", L::system_config, "shared memory (/dev/shm)", S::warning,
                           R::primary, "Ray found /dev/shm under 1 GiB (" + std::string(line.substr(i, e - i)) + " bytes)",
                           {{"container_shm_too_small", 12}}});
  }
  // nvidia-smi nvlink -e: "Link 1: Recovery Errors: 17" / "Replay Errors" / "CRC Errors". A link that
  // retrains (recovery) or whose flits fail their CRC (and are replayed) is degrading; zero is health.
  if (const size_t at = indexed.has(" Errors: ") ? line.find(" Errors: ") : std::string_view::npos;
      at != std::string_view::npos && indexed.has("Link ")) {
    const std::string_view kind = line.substr(0, at);
    const bool counter = kind.size() >= 6 && (kind.substr(kind.size() - 6) == "Replay" ||
                                             (kind.size() >= 8 && kind.substr(kind.size() - 8) == "Recovery") ||
                                             kind.substr(kind.size() - 3) == "CRC");
    size_t i = at + std::string_view(" Errors: ").size(), e = i;
    while (e < line.size() && e - i < 19 && std::isdigit(static_cast<unsigned char>(line[e]))) ++e;
    if (counter && e > i && std::strtoull(std::string(line.substr(i, e - i)).c_str(), nullptr, 10) > 0)
      out.push_back(LogCue{"nvlink_error_counters", L::hardware, "NVLink (nvidia-smi nvlink -e)", S::warning,
                           R::primary,
                           "a pasted nvidia-smi nvlink -e shows NVLink errors (" + std::string(trim_blanks(line)) + ")",
                           {{"nvlink_down_or_degraded", 6}, {"gpu_xid_nvlink_fault", 2}}});
  }
  // Only the cues one of whose literals occurs in the line are tried (LiteralGate).
  thread_local std::vector<uint64_t> open;
  cue_gate().candidates(line, open);
  const auto& cues = text_cues();
  for (size_t i = 0; i < cues.size(); ++i) {
    const TextCue& c = cues[i];
    if (LiteralGate::test(open, i) && matches(c, indexed))
      out.push_back(LogCue{c.id, c.layer, c.subsystem, c.severity, c.role, c.summary, c.supports});
  }
  return out;
}

namespace {

// What is_failure_marker looks for. string_views, not C strings: these are
// tried on every line (no strlen each time).
constexpr std::string_view kMarkerExact[] = {
    "NCCL WARN", "Traceback (most recent call last)", "Xid", "Segmentation fault", "core dumped", "Killed", "SIGABRT",
    "SIGSEGV", "SIGKILL", "SIGTERM", "ERR!",
    // The watchdog reporting, not the watchdog starting ("NCCL
    // watchdog thread started!" is set-up chatter).
    "Watchdog caught", "watchdog got stuck", "Watchdog got stuck", "Unable to", "Could not", "could not", "Cannot",
    "cannot", "PORT_DOWN", "State: Down"};
// Failure words, in any case (failure_word).
constexpr std::string_view kMarkerWords[] = {"error", "fail", "fatal", "timed out", "timeout", "abort", "exception",
                                             "exitcode"};
// The literals line_cues tests before its table: a WARN line or an error
// breadcrumb may name its NCCL source file; /dev/shm sizes; NVLink error counters.
constexpr std::string_view kCuePrelude[] = {" WARN ", "NCCL WARN", " -> ", "/dev/shm", " Errors: "};

// A status table's row whose value says nothing happened: "Uncorrectable
// Error : 0", "Remapping Failure Occurred : No", "Pending Page Blacklist :
// N/A" (nvidia-smi -q, ibv_devinfo, ethtool -S and the like print counters
// and flags this way). The key is words; the value 0, No, N/A or None.
bool null_status_pair(std::string_view t) {
  const size_t colon = t.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view key = trim_blanks(t.substr(0, colon)), value = trim_blanks(t.substr(colon + 1));
  if (key.empty() || !std::isalpha(static_cast<unsigned char>(key.front()))) return false;
  for (char c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != ' ' && c != '-' && c != '_' && c != '(' && c != ')' &&
        c != '/' && c != '.')
      return false;
  return value == "0" || value == "No" || value == "N/A" || value == "None";
}

// A status table's section title naming the counters below it ("ECC
// Errors", "PCIe Errors" in nvidia-smi -q): a few capitalised words, the
// last "Errors", nothing else on the line.
bool errors_title(std::string_view t) {
  t = trim_blanks(t);
  if (t != "Errors" && (t.size() < 7 || t.substr(t.size() - 7) != " Errors")) return false;
  size_t words = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (i > 0 && t[i - 1] != ' ') continue;
    if (t[i] == ' ') return false;  // two spaces: a table row, not a title
    if (!std::isupper(static_cast<unsigned char>(t[i]))) return false;  // "Found 3 ECC Errors" is a report
    ++words;
  }
  for (char c : t)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != ' ') return false;
  return words <= 5;
}

char fold(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + ('a' - 'A')) : c; }

// Whether `word` (lower case) occurs as a failure word, not as part of a name
// or a setting: "ASYNC_ERROR_HANDLING", "test_nccl_timeout.py" and
// "TIMEOUT(ms): 5000" (a settings echo) name an error without reporting one;
// "RuntimeError", "failed", "errors: 3" report one.
bool failure_word(const LineText& line, std::string_view word) {
  if (!line.has_ci(word)) return false;
  const std::string_view t = line.text();
  for (size_t i = 0; i + word.size() <= t.size(); ++i) {
    size_t k = 0;
    while (k < word.size() && fold(t[i + k]) == word[k]) ++k;
    if (k != word.size()) continue;
    const size_t end = i + word.size();
    if (i > 0 && t[i - 1] == '_') continue;
    if (end < t.size() && t[end] == '_') continue;
    // A timeout setting echoed: the word, an optional unit, then ':' or '='
    // and a number ("exitcode  : 1" is a report, not a setting).
    if (word != "timeout") return true;
    size_t j = end;
    for (std::string_view unit : {"(ms)", "(s)", "ms", "_ms", "_s"})
      if (t.substr(j, unit.size()) == unit) {
        j += unit.size();
        break;
      }
    while (j < t.size() && t[j] == ' ') ++j;
    if (j < t.size() && (t[j] == ':' || t[j] == '=')) {
      ++j;
      while (j < t.size() && t[j] == ' ') ++j;
      if (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j]))) continue;
    }
    return true;
  }
  return false;
}

}  // namespace

namespace {

// NCCL's error breadcrumb "<file>.cc:<line> -> <ncclResult>" with a non-zero
// result. Channel, ring and tree lines ("Channel 00/0 : 0[0] -> 1[1] via
// P2P/IPC", "Ring 00 : 0 -> 1 -> 2") also hold " -> ": they are set-up.
bool nccl_error_breadcrumb(std::string_view t) {
  for (size_t at = t.find(" -> "); at != std::string_view::npos; at = t.find(" -> ", at + 1)) {
    const size_t code = at + 4;
    if (code >= t.size() || t[code] < '1' || t[code] > '9') continue;
    // "<name>.<ext>:<digits>" right before the arrow.
    size_t b = at;
    while (b > 0 && std::isdigit(static_cast<unsigned char>(t[b - 1]))) --b;
    if (b == at || b == 0 || t[b - 1] != ':') continue;
    const std::string_view file = t.substr(0, b - 1);
    for (std::string_view ext : {".cc", ".cu", ".h", ".cpp"})
      if (file.size() > ext.size() && file.substr(file.size() - ext.size()) == ext) return true;
  }
  return false;
}

}  // namespace

bool is_failure_marker(const LineText& line) {
  if (line.text().size() < 4) return false;
  // NCCL INFO lines are set-up chatter, except an error breadcrumb ("file.cc:123 -> 2").
  if (line.has("NCCL INFO")) return line.has(" -> ") && nccl_error_breadcrumb(line.text());
  for (std::string_view k : kMarkerExact)
    if (line.has(k)) return true;
  for (std::string_view k : kMarkerWords) {
    if (!failure_word(line, k)) continue;
    // Settings and counters that merely name an error ("NCCL_IB_TIMEOUT=22", "errors: 0", "error_file: <N/A>").
    if (line.has_ci("error_file") || line.has_ci("errors: 0") || line.has_ci("error: 0") || line.has("_TIMEOUT") ||
        line.has("exitcode  : 0") || line.has("exitcode: 0") || null_status_pair(line.text()) ||
        errors_title(line.text()))
      continue;
    return true;
  }
  return false;
}

void add_cue_literals(LineLiterals& out) {
  for (const auto& needles : cue_needles()) {
    if (needles.empty()) out.complete = false;  // a cue tried on every line
    for (std::string_view n : needles) out.exact.push_back(n);
  }
  for (std::string_view l : kCuePrelude) out.exact.push_back(l);
  for (std::string_view l : kMarkerExact) out.exact.push_back(l);
  for (std::string_view l : kMarkerWords) out.folded.push_back(l);
  // is_failure_marker: an NCCL INFO line is a marker only as an error breadcrumb
  // ("file.cc:123 -> 2"); one without " -> " is none, whatever else it holds
  // (and "NCCL INFO" itself is every line of an NCCL_DEBUG log).
  out.exact.push_back(" -> ");
}

}  // namespace ccdiag
