// The built-in signature catalogue. Wordings come from NCCL 2.18–2.30 (WARN
// and INFO format strings in NCCL's src/), PyTorch ProcessGroupNCCL / c10d /
// torchelastic (torch/csrc/distributed/c10d/, torch/distributed/elastic/), the
// kernel (NVIDIA driver Xid/SXid, PCIe AER, mlx5) and CUDA runtime error
// strings. Where a message changed across versions one pattern accepts every
// wording.
//
// Weights are likelihood ratios: a line that names its cause (shm ENOSPC,
// "Duplicate GPU", "Mismatched NCCL version") gets 20–50; a line that several
// causes produce (ncclSystemError, a watchdog timeout) gets 1.2–2; cascade
// lines (peer closed the socket) carry weights but never vote (the decision
// tree ignores cascades), they document what the line would mean if it were
// first.
#include "collectors/logs/signature.hpp"

namespace ccdiag::logs {

namespace {

using L = Layer;
using S = Severity;
using R = FindingRole;

struct Builder {
  std::vector<Signature> v;
  Signature& add(std::string id, L layer, S sev, R role, std::string pattern, std::string summary,
                 std::vector<CauseSupport> supports, std::string meaning) {
    Signature s;
    s.id = std::move(id);
    s.layer = layer;
    s.severity = sev;
    s.role = role;
    s.pattern = std::move(pattern);
    s.summary = std::move(summary);
    s.supports = std::move(supports);
    s.meaning = std::move(meaning);
    v.push_back(std::move(s));
    return v.back();
  }
};

// Completion-with-error line in all three NCCL wordings:
//   2.29+:      "NET/IB: Got completion from peer P with status=IBV_WC_RETRY_EXC_ERR(12) opcode=... vendor_err=129 ... hca mlx5_0"
//   2.21–2.28:  "NET/IB: Got completion from peer P with status=12 opcode=0 len=0 vendor err 129 (Send) ... hca mlx5_0"
//   ≤ 2.20:     "NET/IB : Got completion from peer P with error 12, opcode 0, len 0, vendor err 129 (Send)"
std::string ib_completion(const std::string& status) {
  return R"re(NET/IB ?: Got completion from peer (?P<peer>\S+) with (?:status=(?:(?P<status_name>[A-Za-z_]+)\()?|error )(?P<status>)re" +
         status + R"re()\b(?:.*?vendor[_ ]err[= ](?P<vendor_err>\d+))?(?:.*? hca (?P<nic>[\w.-]+))?)re";
}

std::vector<Signature> build() {
  Builder b;

  // ------------------------------------------------------------ NCCL: IB / RDMA transport
  b.add("nccl.ib.completion_error.retry_exceeded", L::transport, S::error, R::primary, ib_completion("12"),
        "IB completion error status 12 (IBV_WC_RETRY_EXC_ERR) to peer {peer} on {nic}, vendor err {vendor_err}",
        {{"ib_transport_retry_exceeded", 20}, {"nic_link_flapping", 2}, {"nic_port_down", 2}},
        "Transport retry counter exceeded: the peer's NIC did not ACK (link/port down, peer node gone, "
        "congestion or NCCL_IB_TIMEOUT too small)");
  b.add("nccl.ib.completion_error.rnr_retry_exceeded", L::transport, S::error, R::primary, ib_completion("13"),
        "IB completion error status 13 (RNR retry exceeded) to peer {peer} on {nic}",
        {{"qp_error_state", 5}, {"ib_transport_retry_exceeded", 3}},
        "Receiver not ready retries exhausted: the remote QP posted no receive (remote stalled or gone)");
  b.add("nccl.ib.completion_error.wr_flush", L::transport, S::warning, R::cascade, ib_completion("5"),
        "IB completion status 5 (WR_FLUSH_ERR) to peer {peer}: QP already in error",
        {{"qp_error_state", 2}},
        "Work request flushed because the QP was already in error: secondary, look for the first error");
  b.add("nccl.ib.completion_error.local_protection", L::transport, S::error, R::primary, ib_completion("4"),
        "IB completion error status 4 (LOC_PROT_ERR) to peer {peer} on {nic}",
        {{"pcie_acs_p2p_blocked", 8}, {"gpudirect_rdma_module_missing", 6}, {"iommu_blocks_p2p", 4}},
        "Local protection error on a registered buffer: GPUDirect RDMA broken by ACS/IOMMU or missing peermem");
  b.add("nccl.ib.completion_error.remote_access", L::transport, S::error, R::cascade, ib_completion("(?:9|10|11)"),
        "IB completion error status {status} (remote access/invalid request) from peer {peer}",
        {{"rank_process_died", 3}, {"qp_error_state", 2}},
        "The remote memory region is gone: the peer process crashed or tore down its communicator");
  b.add("nccl.ib.completion_error", L::transport, S::error, R::primary, ib_completion(R"re(\d+)re"),
                     "IB completion error status {status} to peer {peer} on {nic}, vendor err {vendor_err}",
                     {{"qp_error_state", 4}, {"ib_transport_retry_exceeded", 2}},
                     "An RDMA work request completed with an error; the status names the failure")
      .fallback = true;
  b.add("nccl.ib.cqe_error", L::transport, S::error, R::symptom,
        R"re(NET/IB: Got CQE with error \(devIndex=(?P<dev_index>\d+).*?qp_num=(?P<qp_num>\d+)\))re",
        "IB CQE with error on device index {dev_index}, QP {qp_num}", {{"qp_error_state", 2}},
        "Precedes the completion-error line (2.29.7+); the QP number correlates with `rdma res show qp`");
  b.add("nccl.ib.hint", L::transport, S::info, R::context,
        R"re(HINT: In many cases this error occurs when (?P<hint>.+))re", "NCCL hint: this error often occurs when {hint}",
        {}, "NCCL 2.30.7 hint printed after an IB completion error (status 4/5/12)");
  b.add("nccl.ib.async_fatal", L::transport, S::critical, R::primary,
        R"re(NET/IB ?: (?P<nic>[\w.-]+):(?P<port>\d+) async fatal event(?: on (?P<object>CQ|QP))?[^:]*: (?P<event>.+))re",
        "IB async fatal event on {nic} port {port}: {event}",
        {{"qp_error_state", 8}, {"nic_port_down", 4}, {"nic_link_flapping", 2}},
        "Device-fatal, CQ-overrun or QP-fatal asynchronous event from the HCA");
  b.add("nccl.ib.comm_fatal", L::transport, S::error, R::symptom,
        R"re(communicator encountered a fatal error \(detected in (?P<where>[^)]*)\))re",
        "communicator failed after a fatal IB async event (detected in {where})", {{"qp_error_state", 2}},
        "Propagation of an async fatal event (NCCL_IB_RETURN_ASYNC_EVENTS=1)");
  b.add("nccl.ib.async_event", L::transport, S::warning, R::primary,
        R"re(NET/IB ?: (?P<nic>[\w.-]+):(?P<port>\d+) Got non-fatal async event: (?P<event>[^(]+?)\s*\((?P<event_code>\d+)\))re",
        "IB async event on {nic} port {port}: {event} ({event_code})",
        {{"nic_link_flapping", 5}, {"nic_port_down", 2}},
        "Port error / LID change / SM change: link flap or subnet-manager activity; correlate with the hang start");
  b.add("nccl.ib.gid_table_changed", L::transport, S::warning, R::primary,
        R"re(NET/IB ?: (?P<nic>[\w.-]+):(?P<port>\d+) GID table changed)re", "RoCE GID table changed on {nic} port {port}",
        {{"roce_gid_index_mismatch", 4}, {"nic_link_flapping", 2}},
        "The netdev's IP address changed under a running job: the GID index in use may be invalid");
  b.add("nccl.ib.create_qp_enomem", L::system_config, S::error, R::primary,
        R"re(Call to ibv_create_qp failed with error (?P<error>Cannot allocate memory))re",
        "ibv_create_qp failed: Cannot allocate memory (memlock limit)",
        {{"memlock_limit_too_low", 50}}, "Locked-memory limit too low for the QP buffers: set memlock unlimited");
  b.add("nccl.ib.create_qp_failed", L::transport, S::error, R::primary,
                     R"re(Call to ibv_create_qp failed with error (?P<error>[^,]+))re", "ibv_create_qp failed: {error}",
                     {{"memlock_limit_too_low", 3}, {"unusable_hca_selected", 3}},
                     "QP creation failed: memlock limit or HCA resource limits")
      .fallback = true;
  // ibv_reg_dmabuf_mr (NCCL >= 2.19) registers GPU memory through DMA-BUF: RLIMIT_MEMLOCK does not apply,
  // and ENOMEM there is the size registered (NCCL_BUFFSIZE, channels) against BAR1 / NIC translation resources.
  b.add("nccl.ib.reg_dmabuf_failed", L::transport, S::error, R::primary,
        R"re(Call to ibv_reg_dmabuf_mr failed with error (?P<error>[^,]+))re", "ibv_reg_dmabuf_mr failed: {error}",
        {{"nccl_config_error", 3}, {"gpudirect_rdma_module_missing", 1.5}},
        "GPU memory registration by DMA-BUF failed: registered size against BAR1/NIC resources, or no DMA-BUF support");
  b.add("nccl.ib.reg_mr_failed", L::transport, S::error, R::primary,
        R"re(Call to (?P<call>ibv_reg_mr(?:_iova2)?) failed with error (?P<error>[^,]+))re",
        "{call} failed: {error}",
        {{"gpudirect_rdma_module_missing", 6}, {"memlock_limit_too_low", 5}},
        "Memory registration failed: memlock limit, or GPU memory without nvidia-peermem / dma-buf support");
  b.add("nccl.ib.modify_qp_enodev", L::transport, S::error, R::primary,
        R"re(Call to ibv_modify_qp failed with (?:error )?(?:19 )?(?P<error>No such device))re",
        "ibv_modify_qp failed: No such device (the HCA is not usable here)",
        {{"unusable_hca_selected", 60}},
        "The verbs device NCCL picked cannot be used from this environment (container, wrong HCA): restrict NCCL_IB_HCA");
  b.add("nccl.ib.modify_qp_einval", L::transport, S::error, R::primary,
        R"re(Call to ibv_modify_qp failed with (?:error )?(?:22 )?(?P<error>Invalid argument))re",
        "ibv_modify_qp failed: Invalid argument (GID index / RoCE version)",
        {{"roce_gid_index_mismatch", 30}, {"mtu_mismatch", 3}, {"nccl_config_error", 2}},
        "Wrong RoCE GID index or version (NCCL_IB_GID_INDEX forced), or MTU mismatch");
  // ENODATA: the GID table has no entry at the index in use (NCCL_IB_GID_INDEX pinned to a slot that is
  // empty on this host, or renumbered since an interface bounced). NCCL prints the local GID it read
  // there: "::" when the slot is empty.
  b.add("nccl.ib.modify_qp_enodata", L::transport, S::error, R::primary,
        R"re(ibv_modify_qp failed with (?:error )?(?:61 )?(?P<error>No data available))re",
        "ibv_modify_qp failed: No data available (no GID at the GID index in use)",
        {{"roce_gid_index_mismatch", 30}, {"nccl_config_error", 2}},
        "The GID index in use names an empty GID table slot on this host (a pinned NCCL_IB_GID_INDEX, or the "
        "table renumbered after an interface bounce): unset it or choose the RoCE v2 IPv4 entry from show_gids");
  b.add("nccl.ib.modify_qp_empty_gid", L::transport, S::error, R::primary,
        R"re(ibv_modify_qp failed with .*?local GID index (?P<gid_index>\d+), .*?(?P<side>local|remote) GID ::(?:,|\s|$))re",
        "ibv_modify_qp failed with the {side} GID all zeroes (GID index {gid_index} in use here)",
        {{"roce_gid_index_mismatch", 40}},
        "A GID of the connection is all zeroes: the index in use names an empty GID-table slot (local: on this "
        "host; remote: on the peer, whose NCCL_IB_GID_INDEX differs or is pinned wrong)");
  b.add("nccl.ib.modify_qp_etimedout", L::transport, S::error, R::primary,
        R"re(Call to ibv_modify_qp failed with (?:error )?(?:110 )?(?P<error>Connection timed out))re",
        "ibv_modify_qp failed: Connection timed out (no route between the NICs)",
        {{"nic_pair_unreachable", 30}, {"roce_gid_index_mismatch", 2}},
        "No route between rails (try NCCL_CROSS_NIC=0) or unreachable remote GID");
  b.add("nccl.ib.modify_qp_failed", L::transport, S::error, R::primary,
                     R"re(Call to ibv_modify_qp failed with (?:error )?(?:(?P<errno>\d+) )?(?P<error>[^,]+))re",
                     "ibv_modify_qp failed: {error}", {{"qp_error_state", 3}, {"unusable_hca_selected", 2}},
                     "A QP state transition failed during connection setup")
      .fallback = true;
  b.add("nccl.ib.poll_cq_failed", L::transport, S::error, R::primary,
        R"re(Call to ibv_poll_cq\(\) returned (?P<code>-?\d+))re", "ibv_poll_cq returned {code}",
        {{"qp_error_state", 4}, {"nic_port_down", 2}}, "CQ polling failed: device error");
  b.add("nccl.ib.post_failed", L::transport, S::error, R::primary,
        R"re(ibv_post_(?P<op>send|recv)\(\) failed with error (?P<error>[^,]+))re", "ibv_post_{op} failed: {error}",
        {{"qp_error_state", 6}}, "Posting a work request failed: QP in error state or queue overflow");
  b.add("nccl.ib.incompatible_devices", L::system_config, S::error, R::primary,
        R"re(NET/IB ?: (?:Attempted to connect incompatible devices|Remote (?P<remote_type>\S+) device is incompatible))re",
        "NCCL tried to connect IB and RoCE devices of different link types",
        {{"unusable_hca_selected", 8}, {"nccl_config_error", 4}},
        "IB vs RoCE mix across ranks: select NICs of one link type with NCCL_IB_HCA");
  b.add("nccl.ib.resiliency_fatal", L::transport, S::critical, R::primary,
        R"re(NET/IB: (?:Fatal error\. Detected (?P<failed>\d+) failed devices out of (?P<total>\d+)|The error is fatal))re",
        "NCCL IB port failover gave up: {failed} of {total} devices failed",
        {{"nic_port_down", 8}, {"nic_link_flapping", 3}}, "More than one device failed, or none left (2.29.7+ resiliency)");
  b.add("nccl.ib.device_marked_failed", L::transport, S::error, R::primary,
        R"re(NET/IB: Device (?P<dev_index>\d+) marked as failed)re", "NCCL marked IB device index {dev_index} as failed",
        {{"nic_port_down", 6}, {"nic_link_flapping", 3}}, "Port failover took a device out of service");
  // Printed at INFO on every host without an RDMA NIC (most single-node
  // jobs, cloud VMs); NCCL then uses sockets. Context, not a vote: on the
  // corpus it never came with the cause it used to nudge.
  b.add("nccl.ib.no_device", L::system_config, S::info, R::context, R"re(NET/IB ?: No device found)re",
        "NET/IB found no usable device (NCCL falls back to sockets)", {},
        "IB not usable: no RDMA NIC, driver, NCCL_IB_HCA filter or container without /dev/infiniband");
  b.add("nccl.net.plugin_init_failed", L::nccl, S::error, R::primary, R"re(Failed to initialize any NET plugin)re",
        "NCCL failed to initialise any network plugin", {{"net_plugin_mismatch", 40}, {"nccl_config_error", 3}},
        "NCCL_NET / NCCL_NET_PLUGIN names a plugin that cannot load, or its libraries are missing");
  b.add("nccl.net.plugin_load_failed", L::nccl, S::warning, R::symptom,
        R"re(NET/Plugin ?: (?:Plugin load returned|Failed to find|Could not find|Loading of .* failed|dlerror)(?P<what>.*))re",
        "NCCL net plugin could not be loaded{what}", {{"net_plugin_mismatch", 3}},
        "A requested net plugin did not load (wrong ABI or path)");
  b.add("nccl.net.gdr_disabled", L::system_config, S::warning, R::context,
        R"re(NET/(?P<net>\S+) ?: GPU Direct RDMA Disabled for HCA (?P<hca_index>\d+) '(?P<nic>[^']+)')re",
        "GPUDirect RDMA disabled for HCA {nic}", {{"gpudirect_rdma_module_missing", 2}},
        "No nvidia-peermem / dma-buf path for this NIC: transfers go through host memory");
  b.add("nccl.ibverbs.open_failed", L::system_config, S::warning, R::context, R"re(Failed to open libibverbs\.so)re",
        "libibverbs could not be loaded (no IB transport)", {},
        "rdma-core not installed or not visible: NCCL uses sockets between nodes");

  // ------------------------------------------------------------ NCCL: sockets and bootstrap
  b.add("nccl.socket.connection_closed", L::transport, S::warning, R::cascade,
        R"re(Connection closed by remote peer (?P<peer>\S+))re", "connection closed by remote peer {peer}",
        {{"rank_process_died", 2}}, "The peer process died or closed the socket: usually a consequence of a failure there");
  b.add("nccl.socket.call_failed", L::transport, S::warning, R::cascade,
        R"re((?:ncclOsSocketProgressOpt|socketProgressOpt|ncclSocketProgressOpt): Call to (?P<call>\w+)(?: from)? (?P<peer>\S+) failed ?: (?P<error>.+))re",
        "socket {call} to {peer} failed: {error}", {{"rank_process_died", 2}, {"socket_connection_failure", 2}},
        "A socket send/recv failed (Connection reset by peer, Broken pipe): the peer usually crashed");
  b.add("nccl.socket.connect_retry_exceeded", L::transport, S::error, R::primary,
        R"re((?P<caller>\w+): connect to (?P<peer>\S+) returned (?P<error>.+?), exceeded error retry count after (?P<attempts>\d+) attempts)re",
        "connect to {peer} failed after {attempts} attempts: {error}",
        {{"bootstrap_unreachable", 8}, {"firewall_blocked_ports", 4}, {"wrong_network_interface", 3}},
        "The peer's bootstrap/proxy address is unreachable: interface, route, firewall, or the peer never listened");
  b.add("nccl.socket.connect_failed", L::transport, S::error, R::primary,
                     R"re((?P<caller>\w+): [Cc]onnect to (?P<peer>\S+) failed ?: (?P<error>.+))re",
                     "connect to {peer} failed: {error}",
                     {{"socket_connection_failure", 4}, {"bootstrap_unreachable", 3}, {"firewall_blocked_ports", 2}},
                     "A TCP connect failed (refused, unreachable)")
      .fallback = true;
  b.add("nccl.socket.connect_retrying", L::transport, S::info, R::symptom,
        R"re(connect to (?P<peer>\S+) returned (?P<error>.+?), retrying \((?P<attempt>\d+)/(?P<max_attempts>\d+)\))re",
        "retrying connect to {peer} ({attempt}/{max_attempts}): {error}", {{"bootstrap_unreachable", 1.5}},
        "NCCL is retrying a socket connect; fails after NCCL_SOCKET_RETRY_CNT attempts");
  b.add("nccl.socket.poll_connect_failed", L::transport, S::error, R::primary,
        R"re((?:ncclOs|nccl)?[Ss]ocketPollConnect:? (?:to )?(?P<peer>\S+)? ?failed with error (?P<error>.+))re",
        "socket connect to {peer} failed: {error}", {{"socket_connection_failure", 4}, {"firewall_blocked_ports", 2}},
        "Non-blocking connect completed with an error");
  b.add("nccl.socket.accept_failed", L::transport, S::error, R::primary,
        R"re([Ss]ocketTryAccept: Accept failed: (?P<error>.+))re", "socket accept failed: {error}",
        {{"socket_connection_failure", 3}}, "Accepting a connection failed");
  b.add("nccl.bootstrap.no_interface", L::system_config, S::error, R::primary,
        R"re(Bootstrap ?: no socket interface found)re", "NCCL found no socket interface for bootstrap",
        {{"wrong_network_interface", 50}}, "NCCL_SOCKET_IFNAME matches no interface on this host");
  b.add("nccl.socket.no_interface", L::system_config, S::error, R::primary,
        R"re(NET/Socket ?: (?:No usable listening interface found|no interface found))re",
        "NET/Socket found no usable interface", {{"wrong_network_interface", 20}},
        "NCCL_SOCKET_IFNAME matches no usable interface");
  b.add("nccl.socket.bad_address_family", L::system_config, S::error, R::primary,
        R"re(connecting to address +with family (?P<family>\d+) is neither AF_INET\(2\) nor AF_INET6\(10\))re",
        "bootstrap address is empty/garbage (family {family}): the socket interface was not found",
        {{"wrong_network_interface", 15}, {"bootstrap_unreachable", 2}},
        "NCCL connected to an uninitialised address: NCCL_SOCKET_IFNAME names an interface this host lacks");
  b.add("nccl.bootstrap.message_truncated", L::framework, S::error, R::primary,
        R"re(Message truncated ?: received (?P<got>\d+) bytes instead of (?P<want>\d+))re",
        "bootstrap message truncated: received {got} bytes instead of {want}",
        // The bootstrap exchanges are NCCL's own (connection set-up, allgathers of its structures): a size
        // disagreement there is NCCL against NCCL (versions, or a defect), more than the user's collectives.
        {{"nccl_version_mismatch", 4}, {"nccl_bug", 3}, {"mismatched_collectives", 2}},
        "Ranks disagree about the bootstrap exchange: different NCCL versions or builds, a defect, or different comms");
  b.add("nccl.bootstrap.root_mismatch", L::framework, S::error, R::primary,
        R"re(Bootstrap Root ?: mismatch in info from procs, nranks (?P<nranks_a>\d+) vs (?P<nranks_b>\d+))re",
        "bootstrap root: ranks disagree on nranks ({nranks_a} vs {nranks_b})",
        {{"user_code_bug", 6}, {"nccl_config_error", 3}}, "Wrong world size or a reused unique id");
  b.add("nccl.bootstrap.rank_checked_in", L::framework, S::error, R::primary,
        R"re(Bootstrap Root ?: rank (?P<dup_rank>\d+) of (?P<nranks>\d+) ranks has already checked in)re",
        "bootstrap root: rank {dup_rank} of {nranks} checked in twice",
        {{"user_code_bug", 6}, {"wrong_device_binding", 2}}, "Duplicate rank number or reused unique id");
  b.add("nccl.socket.message_truncated", L::framework, S::error, R::primary,
        R"re(NET/Socket ?: peer (?P<peer>\S+) message truncated ?: receiving (?P<got>\d+) bytes instead of (?P<want>\d+))re",
        "socket transport message from {peer} truncated: {got} bytes instead of {want}",
        {{"mismatched_collectives", 30}, {"nccl_config_error", 4}},
        "Collective size mismatch between ranks, or different NCCL_PROTO/NCCL_ALGO per rank");

  // ------------------------------------------------------------ NCCL: init, config, P2P, NVLS, CUDA
  b.add("nccl.version_mismatch", L::nccl, S::critical, R::primary,
        R"re(Mismatched NCCL version detected ?: rank (?P<rank_a>\d+) version (?P<version_a>\d+) rank (?P<rank_b>\d+) version (?P<version_b>\d+))re",
        "NCCL version mismatch: rank {rank_a} has {version_a}, rank {rank_b} has {version_b}",
        {{"nccl_version_mismatch", 50}}, "Different libnccl across ranks: pin one NCCL build");
  b.add("nccl.ras.version_mismatch", L::nccl, S::error, R::primary,
        R"re(NCCL version mismatch with remote peer (?P<peer>\S+) \(local: (?P<local_version>[^,]+), remote (?P<remote_version>[^)]+)\))re",
        "RAS: NCCL version mismatch with {peer} (local {local_version}, remote {remote_version})",
        {{"nccl_version_mismatch", 30}}, "RAS saw a peer with another NCCL version");
  b.add("nccl.duplicate_gpu", L::framework, S::critical, R::primary,
        R"re(Duplicate GPU detected ?: rank (?P<rank_a>\d+) and rank (?P<rank_b>\d+) both on CUDA device (?P<busid>[0-9a-fA-F]+))re",
        "ranks {rank_a} and {rank_b} are both on GPU {busid}", {{"wrong_device_binding", 50}},
        "Two ranks of one communicator use the same GPU: set the device from LOCAL_RANK");
  b.add("nccl.multi_rank_same_gpu", L::framework, S::critical, R::primary,
        R"re(Multiple [Rr]anks (?:detected using|are using) the same GPU)re",
        "several ranks of one communicator use the same GPU (NCCL 2.30 wording)", {{"wrong_device_binding", 40}},
        "Two ranks on one GPU/partition; NCCL_MULTI_RANK_GPU_ENABLE=1 only if intended");
  b.add("nccl.sharing_gpu", L::framework, S::warning, R::symptom,
        R"re(Detected ranks (?P<rank_a>\d+) and (?P<rank_b>\d+) sharing GPU with bus (?P<busid>[0-9a-fA-F]+))re",
        "ranks {rank_a} and {rank_b} share GPU bus {busid}", {{"wrong_device_binding", 8}},
        "INFO companion of the multiple-ranks-per-GPU error");
  b.add("nccl.p2p.disabled_nvlink", L::hardware, S::error, R::primary,
        R"re(P2P is disabled between NVLINK connected GPUs (?P<gpu_a>\d+) and (?P<gpu_b>\d+))re",
        "P2P disabled between NVLink-connected GPUs {gpu_a} and {gpu_b}",
        {{"nvlink_down_or_degraded", 15}, {"fabric_manager_not_running", 4}},
        "NVML reports P2P not OK on an NVLink pair: NVLink down or fabric manager problem");
  b.add("nccl.p2p.disabled_pcie", L::hardware, S::warning, R::primary,
        R"re(P2P is disabled between connected GPUs (?P<gpu_a>\d+) and (?P<gpu_b>\d+))re",
        "P2P disabled between PCIe-connected GPUs {gpu_a} and {gpu_b}",
        {{"pcie_acs_p2p_blocked", 5}, {"iommu_blocks_p2p", 4}}, "NVML reports P2P not OK on a PCIe pair: ACS/IOMMU");
  b.add("nccl.p2p.could_not_enable", L::hardware, S::info, R::context,
        R"re((?:Could not enable P2P|peer query failed) between dev (?P<dev_a>\d+)\(=(?P<bus_a>[0-9a-fA-F]+)\) and dev (?P<dev_b>\d+)\(=(?P<bus_b>[0-9a-fA-F]+)\))re",
        "CUDA P2P not available between dev {dev_a} and dev {dev_b}", {{"iommu_blocks_p2p", 1.3}},
        "cudaDeviceCanAccessPeer is false: SHM or NET is used for this pair");
  b.add("nccl.p2p.peer_failed", L::hardware, S::error, R::primary,
        R"re(failed to peer with device (?P<peer_dev>\d+)\(=(?P<bus>[0-9a-fA-F]+)\): (?P<code>\d+) (?P<error>.+))re",
        "cudaDeviceEnablePeerAccess to device {peer_dev} failed: {error}",
        {{"iommu_blocks_p2p", 4}, {"gpu_driver_p2p_bug", 4}}, "Enabling peer access failed: IOMMU, driver or container");
  b.add("nccl.p2p.ipc_handle_failed", L::hardware, S::error, R::primary,
        R"re(cudaIpcGetMemHandle failed ?: (?P<error>.+))re", "cudaIpcGetMemHandle failed: {error}",
        {{"gpu_driver_p2p_bug", 3}, {"wrong_device_binding", 2}}, "CUDA IPC handle export failed (containers, driver)");
  b.add("nccl.transport.none_found", L::nccl, S::error, R::primary,
        R"re(No transport found for rank (?P<rank_a>\d+)\[(?P<bus_a>[0-9a-fA-F]+)\] -> rank (?P<rank_b>\d+)\[(?P<bus_b>[0-9a-fA-F]+)\])re",
        "no transport between rank {rank_a} and rank {rank_b}", {{"nccl_config_error", 15}},
        "P2P, SHM and NET are all disabled or unusable for this pair");
  b.add("nccl.nvls.bind_failed", L::nccl, S::critical, R::primary,
        R"re(Failed to bind NVLink SHARP \(NVLS\) Multicast memory of size (?P<size>\d+) ?: CUDA error (?P<cuda_error>\d+) '(?P<error>[^']*)')re",
        "NVLS multicast bind failed (CUDA error {cuda_error} '{error}')",
        {{"nvls_path_failure", 20}, {"fabric_manager_state", 6}},
        "Fabric Manager / NVSwitch problem; the bind blocks until all ranks join (hang point). NCCL_NVLS_ENABLE=0 to confirm");
  b.add("nccl.nvls.same_device", L::system_config, S::error, R::primary,
        R"re(NCCL_NVLS_ENABLE has been set to "1" and communicator has multiple ranks using the same NVML device)re",
        "NCCL_NVLS_ENABLE=1 with several ranks per GPU", {{"nccl_config_error", 10}, {"wrong_device_binding", 4}},
        "NVLS cannot be forced when ranks share a GPU");
  b.add("nccl.mnnvl.not_working", L::hardware, S::critical, R::primary,
        R"re(MNNVL \(cliqueSize (?P<clique_size>\d+)\) is available but not working)re",
        "multi-node NVLink available but not working (clique size {clique_size})",
        {{"fabric_manager_state", 12}, {"nvls_path_failure", 4}}, "IMEX channel or domain misconfigured");
  b.add("nccl.cuda.oom", L::framework, S::error, R::primary,
        R"re(Cuda failure (?:\d+ )?'out of memory')re", "NCCL CUDA allocation failed: out of memory",
        {{"gpu_memory_exhausted", 20}}, "The GPU had no memory left for NCCL buffers");
  b.add("nccl.cuda.illegal_address", L::framework, S::error, R::primary,
        R"re(Cuda failure (?:\d+ )?'an illegal memory access was encountered')re",
        "CUDA illegal memory access seen by NCCL", {{"user_code_bug", 4}, {"gpu_ecc_or_memory_fault", 2}},
        "A kernel on this GPU faulted (user kernel or NCCL); check Xid 13/31 in the kernel log");
  b.add("nccl.cuda.launch_failure", L::hardware, S::error, R::primary,
        R"re(Cuda failure (?:\d+ )?'unspecified launch failure')re", "CUDA unspecified launch failure seen by NCCL",
        {{"gpu_hung_kernel", 4}, {"gpu_xid_nvlink_fault", 2}}, "Kernel aborted by the driver; look for an Xid");
  b.add("nccl.cuda.failure", L::nccl, S::error, R::primary,
                     R"re(Cuda failure (?:(?P<code>\d+) )?'(?P<error>[^']*)')re", "NCCL CUDA call failed: {error}",
                     // Neutral here: what the failure means depends on the CUDA error's name (a rejected
                     // argument is software, a launch failure the GPU); the tree's log cues weigh each
                     // name (analysis/tree/log_cues.cpp).
                     {},
                     "A CUDA runtime/driver call inside NCCL failed (ncclUnhandledCudaError)")
      .fallback = true;
  b.add("nccl.syscall_failed", L::system_config, S::error, R::primary,
                     R"re(NCCL WARN Call to (?P<call>\w+) failed ?: (?P<error>.+))re", "{call} failed: {error}",
                     {{"nccl_config_error", 1.5}}, "A system call inside NCCL failed (ncclSystemError)")
      .fallback = true;
  b.add("nccl.shm.extend_failed", L::system_config, S::critical, R::primary,
        R"re(Error: failed to extend (?P<path>\S+) to (?P<size>\d+) bytes(?:, error: (?P<error>.+?) \((?P<errno>\d+)\))?)re",
        "NCCL could not extend {path} to {size} bytes: {error} ({errno}) — /dev/shm too small",
        {{"container_shm_too_small", 30}},
        "/dev/shm is full (container default 64 MB): --shm-size / emptyDir medium Memory / --ipc=host");
  b.add("nccl.shm.create_failed", L::system_config, S::error, R::primary,
        R"re(Error(?: while creating shared memory segment|: failed to create shared memory file) (?P<path>\S+)(?: \(size (?P<size>\d+)\))?(?:, error: (?P<error>.+?) \((?P<errno>\d+)\))?)re",
        "NCCL could not create shared memory segment {path} (size {size}): {error}",
        {{"container_shm_too_small", 12}, {"removeipc_deletes_shm", 2}}, "Shared-memory segment creation failed");
  b.add("nccl.shm.map_failed", L::system_config, S::error, R::primary,
        R"re(Error: Could not map (?P<path>\S+) size (?P<size>\d+))re", "NCCL could not map {path} ({size} bytes)",
        {{"container_shm_too_small", 6}}, "mmap of a shared-memory segment failed");
  b.add("nccl.shm.unlink_failed", L::system_config, S::error, R::primary,
        R"re(unlink shared memory (?P<path>\S+) failed, error: (?P<error>.+?) \((?P<errno>\d+)\))re",
        "shared memory {path} vanished before unlink: {error}", {{"removeipc_deletes_shm", 15}},
        "Someone removed NCCL's segment: systemd-logind RemoveIPC=yes");
  b.add("nccl.topo.ring_broken", L::nccl, S::error, R::primary,
        R"re(Error ?: ring (?P<ring>\d+) does not (?:loop back to start|contain rank (?P<missing_rank>\d+)))re",
        "NCCL ring {ring} is inconsistent across ranks", {{"nccl_config_error", 5}, {"pcie_topology_misdetected", 3}},
        "Ranks computed different topologies (different env or topology files)");
  b.add("nccl.proxy.abort_state", L::nccl, S::warning, R::cascade,
        R"re(Comm (?P<comm_ptr>0x[0-9a-f]+|\(nil\)) is in abort state)re", "communicator is in abort state", {},
        "The communicator was aborted while its proxy was working: consequence of an earlier error");
  b.add("nccl.proxy.recv_failed", L::nccl, S::warning, R::cascade,
        R"re(Socket recv failed while polling for opId=(?P<op_id>\S+))re", "proxy socket recv failed (op {op_id})",
        {}, "The proxy connection broke: usually a local peer died");
  b.add("nccl.proxy.service_error", L::nccl, S::warning, R::symptom,
        R"re(\[(?:Service thread|Proxy Service (?P<proxy_rank>\d+))\] (?P<what>Error encountered progressing operation|Failed to execute operation|Could not receive type from localRank)(?P<detail>.*))re",
        "NCCL proxy service: {what}{detail}", {{"socket_connection_failure", 1.3}},
        "Proxy setup/connect failed; usually a NET error underneath or a dead local peer");
  b.add("nccl.enqueue.self_unmatched", L::framework, S::error, R::primary,
        R"re(Trying to (?P<op>send|recv) to self without a matching (?:recv|send))re",
        "unmatched self {op} in a group", {{"user_code_bug", 10}}, "Send/recv to self needs its partner in the same group");
  b.add("nccl.enqueue.no_algorithm", L::system_config, S::error, R::primary,
        R"re(No algorithm/protocol available for function (?P<func>\S+) with datatype (?P<dtype>\S+))re",
        "no algorithm/protocol for {func} {dtype}", {{"nccl_config_error", 20}}, "NCCL_ALGO/NCCL_PROTO too restrictive");
  b.add("nccl.graph.capture_misuse", L::nccl, S::error, R::primary,
        R"re(Streams given to a communicator within a NCCL group must either be all uncaptured or all captured|Either none or all communicators in a ncclGroup\(\) can be CUDA graph captured)re",
        "CUDA graph capture mixed with uncaptured streams in one NCCL group", {{"cuda_graph_or_stream_misuse", 50}},
        "All or none of a group's streams must be captured by the same graph");
  b.add("nccl.comm.revoked", L::framework, S::error, R::primary,
        R"re((?:(?P<func>\w+): communicator was revoked|Attempt to use communicator before the previous operation returned ncclSuccess))re",
        "communicator used after revoke/abort or during async init", {{"user_code_bug", 5}},
        "Use after revoke/abort, or before non-blocking init completed");
  b.add("nccl.init.local_ranks_failed", L::system_config, S::error, R::primary,
        R"re(Failed to determine local ranks rank (?P<failed_rank>\d+) hostHash (?P<host_hash>[0-9a-f]+))re",
        "NCCL could not determine local ranks (hostHash {host_hash})",
        {{"nccl_config_error", 3}, {"nccl_bug", 2}}, "Host identity inconsistent (containers / NCCL_HOSTID)");
  b.add("nccl.enqueue.callback_failed", L::nccl, S::error, R::symptom,
        R"re(hostStreamPlanCallback\(\) failed ?: (?P<error>.+))re", "NCCL host stream callback failed: {error}", {},
        "Error while posting proxy work from the CUDA host callback (usually a network error underneath)");
  b.add("nccl.ras.peer_dead", L::framework, S::error, R::symptom, R"re(RAS declaring peer (?P<peer>\S+) as DEAD)re",
        "NCCL RAS declared peer {peer} dead", {{"rank_process_died", 4}}, "A peer process stopped answering RAS");
  b.add("nccl.ras.timeout", L::transport, S::warning, R::symptom,
        R"re(RAS (?P<what>send stuck timeout error|connect timeout warning) \((?P<seconds>\d+)s\))re",
        "NCCL RAS {what} after {seconds}s", {{"socket_connection_failure", 1.3}}, "RAS network trouble with a peer");
  b.add("nccl.error_breadcrumb", L::nccl, S::info, R::symptom,
        R"re(NCCL INFO (?P<src_file>[\w/.-]+\.(?:cc|h|cu|cpp)):(?P<src_line>\d+)(?: \((?P<func>[^)]*)\))? -> (?P<code>\d+))re",
        "NCCL error {code} propagated through {src_file}:{src_line}", {},
        "Error-propagation breadcrumb; the first after a WARN names the failing layer");

  // ncclResult_t strings (ncclGetErrorString) as PyTorch and NCCL print them.
  b.add("nccl.result.unhandled_cuda_error", L::nccl, S::error, R::symptom,
        R"re(unhandled cuda error|ncclUnhandledCudaError)re", "NCCL returned ncclUnhandledCudaError",
        // Behind it in the real-incident corpus (tuning part) mostly an NCCL release's defect (3 of 5 cases):
        // LR ~8 from the counts, used at 3 (docs/decision-tree.md, calibration).
        {{"nccl_bug", 3}, {"driver_library_mismatch", 1.5}, {"gpu_hung_kernel", 1.2}},
        "A CUDA call failed inside NCCL; find the Cuda failure line or Xid");
  b.add("nccl.result.system_error", L::nccl, S::error, R::symptom,
        R"re(unhandled system error|ncclSystemError)re", "NCCL returned ncclSystemError",
        // The interface NCCL picked is the commonest system-call failure behind it in the real-incident
        // corpus (tests/corpus, tuning part): a nudge, not a verdict.
        {{"socket_connection_failure", 1.2}, {"wrong_network_interface", 3}},
        "A system call or library (socket, ibverbs, shm) failed; see the WARN before it");
  b.add("nccl.result.internal_error", L::nccl, S::error, R::symptom,
        R"re(internal error - please report this issue|ncclInternalError)re", "NCCL returned ncclInternalError",
        {{"nccl_bug", 1.5}, {"wrong_network_interface", 2}},
        "Internal check failed; often a symptom of a configuration problem (bad address, topology)");
  b.add("nccl.result.invalid_argument", L::framework, S::error, R::symptom,
        R"re(invalid argument \(run with NCCL_DEBUG=WARN|ncclInvalidArgument)re", "NCCL returned ncclInvalidArgument",
        {{"user_code_bug", 2}}, "An argument of an NCCL call was invalid (application bug)");
  b.add("nccl.result.invalid_usage", L::framework, S::error, R::symptom,
        R"re(invalid usage \(run with NCCL_DEBUG=WARN|ncclInvalidUsage)re", "NCCL returned ncclInvalidUsage",
        {{"user_code_bug", 2}, {"wrong_device_binding", 1.5}}, "The application used NCCL incorrectly");
  b.add("nccl.result.remote_error", L::transport, S::error, R::cascade,
        R"re(remote process exited or there was a network error|ncclRemoteError)re", "NCCL returned ncclRemoteError",
        {{"rank_process_died", 2}}, "A peer died or the network failed; the cause is on the other side");
  b.add("nccl.result.timeout", L::nccl, S::error, R::symptom, R"re(\bncclTimeout\b)re", "NCCL returned ncclTimeout",
        {{"gpu_hung_kernel", 1.3}}, "Device-side barrier timeout (2.30)");

  // ------------------------------------------------------------ NCCL INFO: set-up (topology, versions, env)
  b.add("nccl.info.version", L::nccl, S::info, R::context,
        R"re(NCCL version (?P<version>\d+\.\d+\.\d+)(?P<version_suffix>[^+\s]*)\+cuda(?P<cuda>\d+\.\d+))re",
        "NCCL {version}+cuda{cuda}", {}, "Library and CUDA build version of this process");
  b.add("nccl.info.cuda_driver", L::nccl, S::info, R::context, R"re(cudaDriverVersion (?P<driver>\d+))re",
        "CUDA driver version {driver}", {}, "Driver API version");
  b.add("nccl.info.bootstrap", L::nccl, S::info, R::context, R"re(Bootstrap ?: Using (?P<ifaces>.+))re",
        "bootstrap interface {ifaces}", {}, "Out-of-band interface used for bootstrap and RAS");
  b.add("nccl.info.env", L::nccl, S::info, R::context,
        R"re((?P<var>NCCL_\w+) set (?:by environment )?to (?P<value>\S*?)\.?\s*$)re", "{var}={value} (environment)", {},
        "Effective NCCL_* environment per process; compared across ranks");
  b.add("nccl.info.ib_using", L::transport, S::info, R::context,
        R"re(NET/IB ?: Using (?P<nics>.+?) ?; OOB (?P<oob>\S+))re", "NET/IB using {nics}, OOB {oob}", {},
        "NICs in use and their link layer (IB/RoCE)");
  b.add("nccl.info.socket_using", L::transport, S::info, R::context, R"re(NET/Socket ?: Using (?P<ifaces>.+))re",
        "NET/Socket using {ifaces}", {}, "Interfaces used by the socket transport");
  b.add("nccl.info.network", L::transport, S::info, R::context, R"re(Using network (?P<net>\S+))re",
        "network transport {net}", {}, "IB, Socket or a plugin");
  b.add("nccl.info.comm_init", L::nccl, S::info, R::context,
        R"re(comm (?P<comm_ptr>0x[0-9a-f]+|\(nil\)) rank (?P<rank>\d+) nranks (?P<nranks>\d+) cudaDev (?P<cuda_dev>\d+)(?: nvmlDev (?P<nvml_dev>\d+))? busId (?P<busid>[0-9a-f]+)(?: commId 0x(?P<comm_id>[0-9a-f]+))?.*?- Init (?P<phase>START|COMPLETE))re",
        "comm init {phase}: rank {rank}/{nranks} cudaDev {cuda_dev} busId {busid}", {},
        "Binds the communicator to rank, GPU and commHash");
  b.add("nccl.info.nodes", L::nccl, S::info, R::context,
        R"re(comm (?P<comm_ptr>0x[0-9a-f]+) rank (?P<rank>\d+) nRanks (?P<nranks>\d+) nNodes (?P<nnodes>\d+) localRanks (?P<local_ranks>\d+) localRank (?P<local_rank>\d+))re",
        "rank {rank}: {nnodes} nodes, {local_ranks} local ranks", {}, "Node count as NCCL sees it");
  b.add("nccl.info.nranks", L::nccl, S::info, R::context, R"re(NCCL INFO nranks (?P<nranks>\d+)\s*$)re",
        "nranks {nranks}", {}, "Older NCCL: communicator size");
  b.add("nccl.info.transport", L::nccl, S::info, R::context,
        R"re((?:Channel|Ring) (?P<channel>\d+)(?:/(?P<conn>\d+))? ?: (?P<from_rank>\d+)\[(?P<from_dev>[0-9a-fx]+)\] -> (?P<to_rank>\d+)\[(?P<to_dev>[0-9a-fx]+)\] (?:\[(?P<direction>send|receive)\] )?via (?P<transport>\S+(?: pointer)?))re",
        "channel {channel}: {from_rank} -> {to_rank} via {transport}", {}, "Transport per peer and channel");
  b.add("nccl.info.ring", L::nccl, S::info, R::context,
        R"re((?:Channel (?P<channel>\d+)/(?P<nchannels>\d+)|Ring (?P<ring>\d+)) ?:(?P<ring_ranks>(?: +\d+)+) *(?:\.\.\.)?\s*$)re",
        "ring order{ring_ranks}", {}, "Ring order per channel (rank 0 only)");
  b.add("nccl.info.trees", L::nccl, S::info, R::context,
        R"re(Trees(?P<trees>(?: \[\d+\] -?\d+/-?\d+/-?\d+->\d+->-?\d+)+))re", "trees{trees}", {},
        "Tree children/parent per channel");
  b.add("nccl.info.channels", L::nccl, S::info, R::context,
        R"re((?P<coll_channels>\d+) coll channels, (?P<collnet_channels>\d+) collnet channels, (?P<nvls_channels>\d+) nvls channels, (?P<p2p_channels>\d+) p2p channels)re",
        "{coll_channels} coll, {nvls_channels} nvls, {p2p_channels} p2p channels", {}, "Channel budget");
  b.add("nccl.info.connected_rings", L::nccl, S::info, R::context,
        R"re(Connected all rings(?:, use ring PXN (?P<pxn>\d) GDR (?P<gdr>\d))?)re", "all rings connected", {},
        "Ring connection finished (lazy with NCCL_RUNTIME_CONNECT=1)");
  b.add("nccl.info.nvls_support", L::nccl, S::info, R::context,
        R"re(NVLS multicast support is (?P<nvls_not>not )?available on dev (?P<dev>\d+))re",
        "NVLS multicast {nvls_not}available on dev {dev}", {}, "NVLS usage");
  b.add("nccl.info.gdr", L::transport, S::info, R::context,
        R"re(NET/(?P<net>\S+) ?: GPU Direct RDMA Enabled for HCA (?P<hca_index>\d+) '(?P<nic>[^']+)')re",
        "GPUDirect RDMA enabled for HCA {nic}", {}, "GDR capability per NIC");
  b.add("nccl.info.no_net_plugin", L::nccl, S::info, R::context, R"re(NET/Plugin ?: No plugin found)re",
        "no NCCL net plugin (internal IB/Socket)", {}, "Internal network implementation in use");
  b.add("nccl.info.affinity", L::nccl, S::info, R::context,
        R"re(Setting affinity for GPU (?P<gpu_index>\d+) to (?P<cpumask>[0-9a-f,]+))re",
        "GPU {gpu_index} CPU affinity {cpumask}", {}, "CPU affinity NCCL set for its threads");

  // ------------------------------------------------------------ nccl-tests and CUDA samples output
  b.add("nccl_tests.device", L::nccl, S::info, R::context,
        R"re(#\s+Rank\s+(?P<rank>\d+)(?: Group\s+\d+)? Pid\s+(?P<pid>\d+) on\s+(?P<host>\S+) device\s+(?P<cuda_dev>\d+) \[(?P<busid>0x[0-9a-fA-F]+)\] (?P<gpu_name>.+))re",
        "nccl-tests rank {rank} on {host} device {cuda_dev} [{busid}] {gpu_name}", {},
        "nccl-tests device map");
  b.add("nccl_tests.wrong_results", L::hardware, S::error, R::primary,
        R"re(# Out of bounds values : (?P<count>\d+) FAILED)re", "nccl-tests found {count} wrong values",
        {{"gpu_driver_p2p_bug", 4}, {"pcie_acs_p2p_blocked", 3}, {"gpu_ecc_or_memory_fault", 2}},
        "Data corruption in collectives: P2P path or memory errors");
  b.add("cuda.peer_access", L::hardware, S::info, R::context,
        R"re(Device=(?P<dev_a>\d+) (?P<access>CAN|CANNOT) Access Peer Device=(?P<dev_b>\d+))re",
        "device {dev_a} {access} access peer device {dev_b}", {}, "CUDA P2P capability matrix (p2pBandwidthLatencyTest)");

  // ------------------------------------------------------------ CUDA runtime errors (PyTorch / user code)
  b.add("cuda.error.system_not_ready", L::system_config, S::critical, R::primary,
        R"re(system not yet initialized|cudaErrorSystemNotReady|CUDA error 802\b)re",
        "CUDA error 802: system not yet initialized (fabric manager)", {{"fabric_manager_not_running", 30}},
        "NVSwitch systems need nvidia-fabricmanager running before CUDA can initialise");
  b.add("cuda.error.illegal_address", L::framework, S::error, R::primary,
        R"re(CUDA error: an illegal memory access was encountered)re", "CUDA illegal memory access",
        {{"user_code_bug", 4}, {"gpu_ecc_or_memory_fault", 2}}, "A kernel faulted; check Xid 13/31");
  b.add("cuda.error.launch_failure", L::hardware, S::error, R::primary,
        R"re(CUDA error: unspecified launch failure)re", "CUDA unspecified launch failure",
        {{"gpu_hung_kernel", 4}, {"gpu_xid_nvlink_fault", 2}}, "Kernel aborted by the driver; look for an Xid");
  b.add("cuda.error.launch_timeout", L::hardware, S::error, R::primary,
        R"re(the launch timed out and was terminated)re", "CUDA kernel launch timed out", {{"gpu_hung_kernel", 10}},
        "A kernel ran past the watchdog and was killed");
  b.add("cuda.error.ecc", L::hardware, S::critical, R::primary, R"re(uncorrectable ECC error encountered)re",
        "CUDA: uncorrectable ECC error", {{"gpu_ecc_or_memory_fault", 30}}, "Double-bit ECC error: drain and reset the GPU");
  b.add("cuda.error.driver_insufficient", L::system_config, S::critical, R::primary,
        R"re(CUDA driver version is insufficient for CUDA runtime version)re",
        "CUDA driver older than the runtime", {{"driver_library_mismatch", 30}}, "Update the driver or use a matching runtime");
  b.add("cuda.error.devices_unavailable", L::framework, S::error, R::primary,
        R"re(all CUDA-capable devices are busy or unavailable)re", "CUDA devices busy or unavailable",
        {{"wrong_device_binding", 4}, {"gpu_fell_off_bus", 2}}, "Exclusive-process mode, wrong binding or a lost GPU");
  b.add("cuda.error.nvml_driver_mismatch", L::system_config, S::critical, R::primary,
        R"re(Failed to initialize NVML: Driver/library version mismatch)re", "NVML: driver/library version mismatch",
        {{"driver_library_mismatch", 50}}, "User-space driver libraries differ from the loaded kernel module");
  b.add("cuda.error.peer_access_unsupported", L::hardware, S::error, R::primary,
        R"re(peer access is not supported between these two devices)re", "CUDA: peer access not supported",
        // The driver's own answer for the pair (cudaDeviceCanAccessPeer is 0): GPUs or a platform the driver
        // does not do P2P on (consumer cards, some root complexes). ACS and the IOMMU rarely say so: they let
        // P2P start and then hang or corrupt it.
        {{"gpu_driver_p2p_bug", 8}, {"pcie_acs_p2p_blocked", 1.5}, {"iommu_blocks_p2p", 1.5}},
        "P2P not possible between the pair");

  // ------------------------------------------------------------ PyTorch ProcessGroupNCCL / c10d
  b.add("pytorch.watchdog.timeout", L::framework, S::error, R::symptom,
        R"re((?:\[Rank (?P<rank>\d+)\] )?Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(?P<seq>\d+), OpType=(?P<op>\w+)(?:, NumelIn=(?P<numel_in>-?\d+), NumelOut=(?P<numel_out>-?\d+))?, Timeout\(ms\)=(?P<timeout_ms>\d+)\) ran for (?P<elapsed_ms>\d+) milliseconds before timing out)re",
        "watchdog timeout: {op} SeqNum={seq} ran {elapsed_ms} ms (timeout {timeout_ms} ms)",
        {{"rank_skips_collective", 1.5}, {"straggler_or_timeout_too_short", 1.5}, {"mismatched_collectives", 1.2}},
        "This rank entered the collective and it did not finish; ranks that never logged it are suspects")
      .reporter_waits = true;
  b.add("pytorch.watchdog.blocking_wait_timeout", L::framework, S::error, R::symptom,
        R"re((?:\[Rank (?P<rank>\d+)\] )?Work WorkNCCL\(SeqNum=(?P<seq>\d+), OpType=(?P<op>\w+).*?\) timed out in blocking wait)re",
        "blocking wait timed out: {op} SeqNum={seq}", {{"rank_skips_collective", 1.5}, {"straggler_or_timeout_too_short", 1.5}},
        "TORCH_NCCL_BLOCKING_WAIT variant of the watchdog timeout")
      .reporter_waits = true;
  b.add("pytorch.watchdog.failure_detected", L::framework, S::error, R::symptom,
        R"re(failure detected by watchdog at work sequence id: (?P<seq>\d+) PG status: last enqueued work: (?P<last_enqueued>-?\d+), last completed work: (?P<last_completed>-?\d+))re",
        "watchdog failure at SeqNum {seq} (last enqueued {last_enqueued}, last completed {last_completed})",
        {{"rank_skips_collective", 1.2}}, "Enqueued > failed seq: the CPU ran ahead; completed = seq-1 on a healthy hung rank");
  b.add("pytorch.watchdog.stack", L::framework, S::warning, R::symptom,
        R"re(ProcessGroupNCCL::WorkNCCL::checkTimeout|Exception raised from (?P<raised_in>ncclCommWatchdog|watchdogHandler|checkTimeout) at)re",
        "collective timed out (WorkNCCL::checkTimeout via the NCCL watchdog)",
        {{"rank_skips_collective", 1.5}, {"straggler_or_timeout_too_short", 1.3}},
        "Stack of the watchdog exception: a collective never completed on this rank");
  b.add("pytorch.watchdog.terminated", L::framework, S::error, R::symptom,
        R"re(Process group watchdog thread terminated with exception: (?P<what>.+))re",
        "process-group watchdog terminated: {what}", {}, "The watchdog tears the process down after an error");
  b.add("pytorch.heartbeat.stuck", L::framework, S::critical, R::primary,
        R"re(watchdog got stuck for (?P<seconds>\d+) seconds without making progress)re",
        "ProcessGroupNCCL watchdog stuck for {seconds} s (a CUDA/NCCL API call hangs)",
        {{"gpu_hung_kernel", 3}, {"rank_stuck_in_host_code", 3}, {"nccl_bug", 1.5}},
        "The watchdog thread itself is blocked (CUDA API, GIL): not a collective mismatch");
  b.add("pytorch.heartbeat.timeout", L::framework, S::critical, R::primary,
        R"re(Heartbeat monitor timed out! Process will be terminated)re", "heartbeat monitor timed out (older PyTorch)",
        {{"gpu_hung_kernel", 3}, {"rank_stuck_in_host_code", 3}}, "Watchdog blocked; older wording");
  b.add("pytorch.heartbeat.terminating", L::framework, S::error, R::symptom,
        R"re(Terminating the process after attempting to dump debug info, due to (?P<reason>[^.]+))re",
        "terminating the process: {reason}", {}, "Heartbeat monitor kills the process");
  b.add("pytorch.gil_hang", L::framework, S::error, R::primary,
        R"re(Could not acquire GIL within (?P<ms>\d+) ms on exit, possible GIL induced hang)re",
        "could not acquire the GIL within {ms} ms: a Python thread holds it", {{"rank_stuck_in_host_code", 6}},
        "A Python thread blocked with the GIL held");
  b.add("pytorch.ops_failed", L::framework, S::error, R::symptom,
        R"re((?:\[Rank (?P<rank>\d+)\] )?Some NCCL operations have failed or timed out)re",
        "some NCCL operations failed or timed out; the process is taken down", {},
        "Error handling tears the process down (SIGABRT) after a timeout or NCCL error");
  b.add("pytorch.desync.lagging_ranks", L::framework, S::error, R::primary,
        R"re(ranks \[(?P<ranks>[\d, ]+)\] are the lagging ranks that caused this timeout)re",
        "desync report: ranks [{ranks}] never joined the collective",
        {{"rank_skips_collective", 8}, {"rank_process_died", 2}, {"rank_stuck_in_host_code", 2}},
        "TORCH_NCCL_DESYNC_DEBUG names the ranks that never arrived");
  b.add("pytorch.desync.joined_not_finished", L::framework, S::error, R::primary,
        R"re(\[(?P<ranks>[\d, ]+)\] joined but didn't finish collective #(?P<seq>\d+))re",
        "desync report: ranks [{ranks}] joined but did not finish collective #{seq}",
        {{"gpu_hung_kernel", 2}, {"straggler_or_timeout_too_short", 2}}, "Those ranks are stuck inside the collective");
  b.add("pytorch.desync.finished_not_joined", L::framework, S::error, R::primary,
        R"re(\[(?P<ranks>[\d, ]+)\] finished collective #(?P<seq>\d+), but didn't join collective #(?P<next_seq>\d+))re",
        "desync report: ranks [{ranks}] finished #{seq} but never joined #{next_seq}",
        {{"rank_skips_collective", 6}, {"rank_stuck_in_host_code", 3}}, "Those ranks are elsewhere in the program");
  b.add("pytorch.desync.timeout_at", L::framework, S::warning, R::symptom,
        R"re(- \[(?P<rank>\d+)\] Timeout at collective: (?P<op>\w+), #(?P<seq>\d+))re",
        "desync report: rank {rank} timed out at {op} #{seq}", {}, "Header of the desync report");
  b.add("pytorch.collective_mismatch", L::framework, S::critical, R::primary,
        R"re(Detected mismatch between collectives on ranks\. Rank (?P<rank>\d+) is running collective: CollectiveFingerPrint\((?:SequenceNumber=(?P<seq>\d+), )?OpType=(?P<op>\w+)(?:, TensorShape=(?P<shape>\[[^\]]*\]))?(?:, TensorDtypes=(?P<dtype>\w+))?(?:.*?but Rank (?P<other_rank>\d+) is running collective: CollectiveFingerPrint\((?:SequenceNumber=(?P<other_seq>\d+), )?OpType=(?P<other_op>\w+))?)re",
        "collective mismatch at SequenceNumber={seq}: rank {rank} runs {op}",
        {{"mismatched_collectives", 40}, {"rank_skips_collective", 15}},
        "TORCH_DISTRIBUTED_DEBUG=DETAIL fingerprint check: ranks issue different collectives");
  b.add("pytorch.dump.first_signal", L::framework, S::info, R::context,
        R"re(First PG on this rank to signal dumping)re", "this rank timed out first and signalled the dump", {},
        "This rank originated the flight-recorder dump signal");
  b.add("pytorch.dump.observed_signal", L::framework, S::info, R::context,
        R"re(Observed flight recorder dump signal from another rank)re", "dump signalled by another rank", {},
        "This rank did not time out itself (typical of the stuck/missing rank)");
  b.add("pytorch.dump.received_signal", L::framework, S::info, R::context,
        R"re(Received a dump signal due to a collective timeout from (?:this local rank| +rank (?P<signal_rank>\d+)))re",
        "dump signal received (from rank {signal_rank})", {}, "Who signalled the dump");
  b.add("pytorch.dump.written", L::framework, S::info, R::context,
        R"re((?:Finished writing (?:Flight Recorder|NCCLPG) debug info to|dumping nccl trace to) (?P<path>\S+))re",
        "flight recorder dump written to {path}", {}, "Where this rank's flight-recorder dump is");
  b.add("pytorch.dump.timeout", L::framework, S::warning, R::symptom,
        R"re(Future for Flight recorder dump in heartbeatMonitor timed out after (?P<ms>\d+) ms)re",
        "flight recorder dump timed out after {ms} ms", {}, "The dump itself hung (GIL or a stuck CUDA call)");
  b.add("pytorch.async_exception", L::framework, S::error, R::symptom,
        R"re(Collective WorkNCCL\(SeqNum=(?P<seq>\d+), OpType=(?P<op>\w+).*?raised the following async exception: (?P<what>.+))re",
        "{op} SeqNum={seq} raised: {what}", {}, "An NCCL error surfaced asynchronously on a work item");
  b.add("pytorch.remote_error", L::framework, S::warning, R::cascade,
        R"re(remote error detected from rank: (?P<remote_rank>\d+))re", "remote error reported by rank {remote_rank}",
        {}, "TORCH_NCCL_PROPAGATE_ERROR: the failure is on the named rank");
  b.add("pytorch.nccl_error", L::framework, S::error, R::symptom,
        R"re(NCCL error in: (?P<where>\S+?), (?P<what>[^,]+))re", "NCCL error in {where}: {what}", {},
        "PyTorch surfaced an NCCL error; the Last error / WARN text names the cause");
  b.add("pytorch.dist_backend_error", L::framework, S::error, R::symptom,
        R"re(DistBackendError: (?P<what>.+))re", "DistBackendError: {what}", {}, "c10d backend error");
  b.add("pytorch.cuda_oom", L::framework, S::critical, R::primary,
        R"re(CUDA out of memory\. Tried to allocate (?P<size>[\d.]+ [KMGT]?i?B))re",
        "CUDA out of memory (tried to allocate {size})", {{"gpu_memory_exhausted", 40}},
        "This rank exhausted GPU memory");
  b.add("pytorch.store.clients_timeout", L::framework, S::error, R::primary,
        R"re(Timed out after (?P<seconds>\d+) seconds waiting for clients\. (?P<joined>\d+)/(?P<expected>\d+) clients joined)re",
        "TCPStore: only {joined}/{expected} clients joined after {seconds} s",
        {{"bootstrap_unreachable", 4}, {"rank_process_died", 3}, {"firewall_blocked_ports", 2}},
        "Some ranks never reached the rendezvous store")
      .reporter_waits = true;  // the store host waited for the absent ones
  b.add("pytorch.store.barrier_timeout", L::framework, S::error, R::primary,
        R"re(Timed out initializing process group in store based barrier on rank:? (?P<rank>\d+))re",
        "store-based barrier timed out on rank {rank}", {{"bootstrap_unreachable", 3}, {"rank_process_died", 2}},
        "Not all ranks reached init_process_group")
      .reporter_waits = true;
  b.add("pytorch.store.wait_timeout", L::framework, S::error, R::symptom,
        R"re(wait timeout after (?P<ms>\d+)ms, keys: (?P<keys>\S+))re", "TCPStore wait timed out after {ms} ms on {keys}",
        {{"rank_process_died", 2}, {"bootstrap_unreachable", 2}}, "A key another rank should have set never appeared");
  b.add("pytorch.store.connect_failed", L::framework, S::error, R::primary,
        R"re(The client socket has failed to connect to (?P<peer>\S+?) \(errno: (?P<errno>\d+) - (?P<error>[^)]+)\))re",
        "TCPStore connect to {peer} failed: {error}",
        {{"bootstrap_unreachable", 6}, {"firewall_blocked_ports", 3}, {"hostname_resolves_to_loopback", 2}},
        "MASTER_ADDR:MASTER_PORT not reachable");
  b.add("pytorch.store.peer_closed", L::framework, S::warning, R::cascade,
        R"re((?:TCPStore|recvValue|recvBytes|sendBytes).*?(?:Connection reset by peer|Broken pipe|failed to recv, got 0 bytes))re",
        "TCPStore connection lost", {{"rank_process_died", 2}}, "The store server (rank 0's agent) went away");
  b.add("torchelastic.worker_failed", L::framework, S::error, R::primary,
        R"re(failed \(exitcode: (?P<exitcode>-?\d+)\) local_rank: (?P<local_rank>\d+) \(pid: (?P<pid>\d+)\) of binary: (?P<binary>\S+))re",
        "torchrun: local rank {local_rank} (pid {pid}) exited with code {exitcode}",
        {{"rank_process_died", 4}, {"user_code_bug", 2}}, "A worker process failed; torchrun tears the group down");
  b.add("torchelastic.failure_rank", L::framework, S::info, R::context,
        R"re(^\s*rank\s*: (?P<rank>\d+) \(local_rank: (?P<local_rank>\d+)\))re",
        "torchrun failure record for rank {rank}", {}, "Line of torchrun's failure table");
  b.add("torchelastic.failure_exitcode", L::framework, S::error, R::primary,
        R"re(^\s*exitcode\s*: (?P<exitcode>-?\d+) \(pid: (?P<pid>\d+)\))re",
        "torchrun: worker pid {pid} exited with code {exitcode}", {{"rank_process_died", 4}, {"user_code_bug", 2}},
        "torchrun's record of a failed worker (rank from the line before)");
  b.add("torchelastic.signal", L::framework, S::error, R::primary,
        R"re(Signal (?P<signal>\d+) \((?P<signal_name>SIG\w+)\) received by PID (?P<pid>\d+))re",
        "worker pid {pid} killed by {signal_name}", {{"rank_process_died", 8}},
        "A worker was killed by a signal (SIGKILL: OOM killer or the scheduler; SIGABRT: watchdog teardown)");
  // The agent itself was signalled (api.py: "Received 15 death signal,
  // shutting down workers"), then raises SignalException: the job was stopped
  // from outside -- a scheduler's time limit, preemption or cancel (15), a
  // closed terminal or SSH session under nohup (1), Ctrl-C (2) -- not by a
  // failure inside it. No cause votes: the catalogue has none outside the job.
  b.add("torchelastic.agent_signalled", L::framework, S::error, R::symptom,
        R"re(Received (?P<signal>\d+) death signal, shutting down workers)re",
        "torchrun's agent received signal {signal} from outside and stopped the workers", {},
        "The job was stopped from outside (1: SIGHUP, a closed terminal or SSH session; 2: SIGINT, Ctrl-C; "
        "15: SIGTERM, the scheduler's time limit, preemption or cancel): look at who sent it, not at the job");
  // A symptom, not context: it must displace python.exception's fallback
  // reading of the line as a script exception.
  b.add("torchelastic.signal_exception", L::framework, S::error, R::symptom,
        R"re(SignalException: Process (?P<pid>\d+) got signal: (?P<signal>\d+))re",
        "torchrun's agent (pid {pid}) ended on signal {signal} sent from outside", {},
        "The launcher's own exit on a signal it received, not a script exception");
  b.add("torchelastic.closing_signal", L::framework, S::info, R::cascade,
        R"re(Sending process (?P<pid>\d+) closing signal (?P<signal_name>SIG\w+))re",
        "torchrun stops worker pid {pid} with {signal_name}", {}, "torchrun kills the surviving workers after a failure");
  // torch.multiprocessing.spawn (mp.spawn), the launcher without torchrun:
  // its parent reports which process failed and how, after stopping the
  // others with SIGTERM. The process index is the rank when the spawned
  // function takes it as its rank (mp.spawn(fn, nprocs=world): the usual
  // way); on several nodes it is the node-local index.
  // The parent raises for the first worker that failed (it stops the others
  // after it): a decisive signal there is the root cause, as in torchrun's
  // "Root Cause" entry; SIGTERM and SIGABRT are someone else's doing or a teardown.
  b.add("mpspawn.process_signal", L::framework, S::error, R::primary,
        R"re(ProcessExitedException: process (?P<rank>\d+) terminated with signal (?P<signal_name>SIGKILL|SIGSEGV|SIGBUS|SIGILL|SIGFPE))re",
        // One line says both what torchrun says in two (its Root Cause entry ×20, the signal ×8).
        "mp.spawn: process {rank} was killed by {signal_name}", {{"rank_process_died", 60}},
        "A spawned worker was killed by a signal (SIGKILL: OOM killer or the scheduler; SIGSEGV: a native crash)");
  b.add("mpspawn.process_stopped", L::framework, S::error, R::primary,
        R"re(ProcessExitedException: process (?P<rank>\d+) terminated with signal (?P<signal_name>SIGTERM|SIGABRT|SIGINT|SIGHUP))re",
        "mp.spawn: process {rank} ended by {signal_name}", {{"rank_process_died", 2}},
        "A spawned worker was stopped (SIGTERM: the scheduler or an operator; SIGABRT: an abort or watchdog teardown)");
  b.add("mpspawn.process_exit", L::framework, S::error, R::primary,
        R"re(ProcessExitedException: process (?P<rank>\d+) terminated with exit code (?P<exitcode>-?\d+))re",
        "mp.spawn: process {rank} exited with code {exitcode}", {{"rank_process_died", 4}, {"user_code_bug", 2}},
        "A spawned worker left with a non-zero exit code and no Python traceback");
  // Context only: the exception after it decides (a KeyError is the script's
  // bug, a collective timeout says the process was waiting for another).
  b.add("mpspawn.process_raised", L::framework, S::info, R::context,
        R"re(-- Process (?P<rank>\d+) terminated with the following error:)re",
        "mp.spawn: process {rank} raised an exception (its traceback follows)", {},
        "The traceback after this line is the failing worker's own");
  b.add("mpspawn.terminating", L::framework, S::info, R::cascade,
        R"re(spawn\.py:\d+\] Terminating process (?P<pid>\d+) via signal (?P<signal_name>SIG\w+))re",
        "mp.spawn stops worker pid {pid} with {signal_name}", {},
        "mp.spawn stops the surviving workers after the first failure");
  b.add("python.exception", L::framework, S::error, R::symptom,
                     R"re(^(?P<exception>(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception)): (?P<what>.+))re",
                     "{exception}: {what}", {{"user_code_bug", 1.5}}, "An uncaught Python exception")
      .fallback = true;
  b.add("lightning.sync_ddp", L::framework, S::info, R::context,
        R"re(in _sync_ddp$|in _sync_ddp\s*$)re", "collective issued from metric synchronisation (_sync_ddp / log_dict)",
        {{"mismatched_collectives", 1.5}}, "Lightning metric sync: differing logged keys per rank desynchronise collectives");

  // ------------------------------------------------------------ gloo
  // Wordings of the gloo backend (torch's third_party/gloo, TCP transport),
  // as a gloo job on the CPU prints them (seen with torch 2.15, tests/torch/).
  // gloo names no sequence number and no peer rank: the culprit comes from
  // the flight recorder, the stacks, or torchrun's console.
  b.add("gloo.timeout", L::framework, S::error, R::symptom,
        R"re(Timed out waiting (?P<timeout_ms>\d+) ?ms for (?P<op>recv|send) operation to complete)re",
        "gloo {op} timed out after {timeout_ms} ms",
        {{"rank_skips_collective", 1.5}, {"straggler_or_timeout_too_short", 1.5}, {"rank_stuck_in_host_code", 1.3}},
        "This rank waited in a gloo collective for a peer that never sent or received its part: every rank "
        "that logs it is a victim; the rank that does not is the suspect")
      .reporter_waits = true;
  // torch.distributed.monitored_barrier (gloo) names the ranks that did not
  // arrive: rank 0 reports them ("[Rank 0]: Rank 2 failed to pass
  // monitoredBarrier in 10000 ms"; with wait_all_ranks, "Ranks 1, 2 failed
  // ..."; TORCH_DISTRIBUTED_DEBUG=DETAIL's collective check raises "[Rank 0]:
  // Ranks 1 failed ..." for one rank), the others fail after rank 0 gives up. The missing rank skipped the
  // barrier, is stuck before it, or is late: the log cannot tell which.
  b.add("c10d.monitored_barrier_missing", L::framework, S::error, R::primary,
        R"re(Ranks? (?P<rank>\d+) failed to pass monitoredBarrier in (?P<timeout_ms>\d+) ms)re",
        "monitored_barrier: rank {rank} did not reach the barrier within {timeout_ms} ms",
        {{"rank_skips_collective", 8}, {"rank_stuck_in_host_code", 6}, {"straggler_or_timeout_too_short", 4}},
        "The rank that monitored_barrier names never arrived: the odd rank out (skipped the barrier, stuck or late)");
  b.add("c10d.monitored_barrier_missing_ranks", L::framework, S::error, R::primary,
        R"re(Ranks (?P<ranks>\d+(?:, ?\d+)+) failed to pass monitoredBarrier in (?P<timeout_ms>\d+) ms)re",
        "monitored_barrier: ranks {ranks} did not reach the barrier within {timeout_ms} ms",
        {{"rank_skips_collective", 3}, {"rank_stuck_in_host_code", 2}, {"straggler_or_timeout_too_short", 2}},
        "Several ranks never arrived at monitored_barrier");
  b.add("c10d.monitored_barrier_peer_failed", L::framework, S::warning, R::cascade,
        R"re(successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank (?P<peer>\d+))re",
        "reached monitored_barrier, then lost rank {peer} (which gave up waiting for a missing rank)", {},
        "A rank that did arrive fails after rank 0 reports the missing ones");
  // A traceback's frame inside torch.distributed: the call a rank was in.
  // Not a finding; the analyser hands the call to the gloo timeout that
  // follows in the same rank's traceback.
  b.add("pytorch.c10d_frame", L::framework, S::info, R::context,
        R"re(distributed_c10d\.py", line \d+, in (?P<call>\w+))re", "in torch.distributed {call}", {},
        "The torch.distributed call a rank's traceback runs through");
  b.add("gloo.peer_closed", L::transport, S::warning, R::cascade,
        R"re(gloo/transport/tcp/pair\.cc:\d+\] (?P<what>Connection closed by peer|Read error|Write error|Connection reset by peer)\s*\[?(?P<peer>[0-9a-fA-F.:]+?)\]?(?::(?P<port>\d+))?(?:\s|:|$))re",
        "gloo: {what} {peer}", {{"rank_process_died", 2}},
        "The gloo peer process exited or closed its socket: a consequence of a failure there");
  b.add("gloo.enforce.size_mismatch", L::framework, S::error, R::primary,
        R"re(op\.preamble\.length <= op\.nbytes\. (?P<received>\d+) vs (?P<expected>\d+)|Received data size doesn't match expected size)re",
        "gloo received {received} bytes where it expected {expected}: ranks called different collectives",
        {{"mismatched_collectives", 30}},
        "Ranks disagree on the collective (size, dtype or op) at the same point: gloo asks \"Is there a "
        "distributed collective mismatch in your code?\"; the rank that logs it is where it was detected");
  b.add("gloo.enforce", L::framework, S::error, R::symptom,
        R"re(gloo::EnforceNotMet|\[enforce fail at (?P<where>[^\]]*gloo[^\]]*)\] (?P<what>.+))re",
        "gloo enforce failed: {what}", {{"mismatched_collectives", 2}, {"user_code_bug", 1.3}},
        "A gloo consistency check failed (terminate in a gloo thread aborts the process: exit by SIGABRT)")
      .fallback = true;
  // ------------------------------------------------------------ end of gloo

  // ------------------------------------------------------------ kernel log
  b.add("kernel.xid", L::hardware, S::critical, R::primary, R"re(NVRM: Xid \()re", "Xid", {},
        "NVIDIA driver error event; meaning and action from the Xid catalogue")
      .extractor = "xid";
  b.add("kernel.gpu_fell_off_bus", L::hardware, S::critical, R::primary, R"re(has fallen off the bus)re",
        "GPU {pci} has fallen off the bus", {{"gpu_fell_off_bus", 200}}, "The GPU disappeared from PCIe")
      .extractor = "fell_off_bus";
  b.add("kernel.sxid.fatal", L::hardware, S::critical, R::primary,
        R"re(nvidia-nvswitch(?P<switch>\d+): SXid \(PCI:(?P<pci>[0-9a-fA-F:.]+)\): (?P<sxid>\d+), Fatal, Link (?P<link>\d+) (?P<what>.+))re",
        "NVSwitch {switch} fatal SXid {sxid} on link {link}: {what}",
        {{"gpu_xid_nvlink_fault", 8}, {"fabric_manager_state", 5}, {"nvlink_down_or_degraded", 4}},
        "Fatal NVSwitch error (propagates to the GPUs as Xid 74): restart FM / reset the fabric");
  b.add("kernel.sxid.nonfatal", L::hardware, S::warning, R::context,
        R"re(nvidia-nvswitch(?P<switch>\d+): SXid \(PCI:(?P<pci>[0-9a-fA-F:.]+)\): (?P<sxid>\d+), Non-fatal, Link (?P<link>\d+) (?P<what>.+))re",
        "NVSwitch {switch} non-fatal SXid {sxid} on link {link}: {what}", {{"nvlink_down_or_degraded", 1.5}},
        "Non-fatal NVSwitch error (no action unless repeated)");
  b.add("kernel.aer.fatal", L::hardware, S::critical, R::primary,
        R"re((?P<pci>[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d): PCIe Bus Error: severity=Uncorrect(?:ed|able) \(Fatal\), type=(?P<aer_type>[^,]+))re",
        "PCIe uncorrectable fatal error on {pci} ({aer_type})",
        {{"pcie_link_degraded", 6}, {"gpu_fell_off_bus", 4}}, "Fatal AER: the link or device failed");
  b.add("kernel.aer.nonfatal", L::hardware, S::error, R::primary,
        R"re((?P<pci>[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d): PCIe Bus Error: severity=Uncorrect(?:ed|able) \(Non-Fatal\), type=(?P<aer_type>[^,]+))re",
        "PCIe uncorrectable non-fatal error on {pci} ({aer_type})", {{"pcie_link_degraded", 4}},
        "Uncorrectable AER (kernel wordings Uncorrected/Uncorrectable)");
  b.add("kernel.aer.corrected", L::hardware, S::warning, R::context,
        R"re((?P<pci>[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d): PCIe Bus Error: severity=Correct(?:ed|able), type=(?P<aer_type>[^,]+))re",
        "PCIe corrected error on {pci} ({aer_type})", {{"pcie_link_degraded", 1.5}},
        "Corrected AER; many of them mean a marginal link");
  b.add("kernel.dpc.containment", L::hardware, S::critical, R::primary,
        R"re((?P<pci>[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d): DPC: containment event, status:(?P<status>0x[0-9a-f]+) source:(?P<source>0x[0-9a-f]+))re",
        "PCIe DPC containment on {pci} (source {source})", {{"gpu_fell_off_bus", 5}, {"pcie_link_degraded", 4}},
        "Downstream port containment cut the link to the device");
  b.add("kernel.pciehp.link_down", L::hardware, S::error, R::primary,
        R"re(pciehp (?P<pci>[0-9a-f:.]+): Slot\((?P<slot>[^)]+)\): Link Down)re", "PCIe slot {slot} link down",
        {{"gpu_fell_off_bus", 3}, {"pcie_link_degraded", 3}}, "Hot-plug controller saw the link drop");
  b.add("kernel.mlx5.health", L::hardware, S::critical, R::primary,
        R"re(mlx5_core (?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d):? .*?(?P<event>Fatal error \d+ detected|handling bad device|device's health compromised|health compromised|firmware internal error|assert_var))re",
        "mlx5 NIC {pci} health event: {event}", {{"nic_port_down", 6}, {"qp_error_state", 3}},
        "The ConnectX firmware reported a fatal health condition");
  b.add("kernel.mlx5.link_down", L::hardware, S::error, R::primary,
        R"re(mlx5_core (?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d) (?P<nic>\S+): Link down)re",
        "mlx5 port {nic} ({pci}) link down", {{"nic_port_down", 8}, {"nic_link_flapping", 4}},
        "The NIC port lost link");
  b.add("kernel.mlx5.module_event", L::hardware, S::error, R::primary,
        R"re(mlx5_core (?P<pci>[0-9a-fA-F:.]+): Port module event(?:\[error\])?: module (?P<module>\d+), Cable (?P<cable_state>[\w ]+))re",
        "mlx5 {pci} module {module}: cable {cable_state}", {{"nic_port_down", 6}, {"nic_link_flapping", 3}},
        "Transceiver/cable event (unplugged, error, high temperature)");
  b.add("kernel.netdev.link_down", L::hardware, S::warning, R::primary,
        R"re((?P<nic>[\w.-]+): (?:NIC )?Link is Down)re", "network link {nic} down",
        {{"nic_port_down", 3}, {"nic_link_flapping", 3}}, "A network interface lost carrier")
      .fallback = true;
  b.add("kernel.oom_kill", L::framework, S::critical, R::primary,
        R"re(Out of memory: Killed process (?P<pid>\d+) \((?P<process>[^)]+)\))re",
        "kernel OOM killer killed pid {pid} ({process})", {{"rank_process_died", 20}},
        "Host memory exhausted; the rank process was killed (SIGKILL)");
  b.add("kernel.oom_invoked", L::framework, S::warning, R::context, R"re((?P<process>\S+) invoked oom-killer)re",
        "{process} invoked the OOM killer", {}, "Start of an OOM-killer report");
  b.add("kernel.hung_task", L::framework, S::error, R::primary,
        R"re(INFO: task (?P<process>.+?):(?P<pid>\d+) blocked for more than (?P<seconds>\d+) seconds)re",
        "task {process}:{pid} blocked for more than {seconds} s (D state)",
        {{"rank_stuck_in_host_code", 5}}, "Uninterruptible sleep: hung filesystem, driver or device");
  b.add("kernel.peermem.invalid_context", L::hardware, S::warning, R::symptom,
        R"re(nvidia-peermem nv_get_p2p_free_callback:\d+ ERROR detected invalid context)re",
        "nvidia-peermem freed GPU memory under a NIC registration", {},
        "GPU memory registered with a NIC was freed: follows an app crash or Xid");
  b.add("kernel.nvrm.init_failed", L::hardware, S::critical, R::primary,
        R"re(NVRM: GPU (?P<pci>[0-9a-fA-F:.]+): RmInitAdapter failed)re", "GPU {pci} failed to initialise (RmInitAdapter)",
        {{"gpu_fell_off_bus", 4}, {"driver_library_mismatch", 2}}, "The driver could not bring the GPU up");
  b.add("kernel.nvrm.api_mismatch", L::system_config, S::critical, R::primary,
        R"re(NVRM: API mismatch: the client has the version (?P<client_version>\S+), but)re",
        "NVIDIA kernel module and client library versions differ (client {client_version})",
        {{"driver_library_mismatch", 40}}, "Reload the module or reboot after a driver update");
  b.add("kernel.iommu.dmar_fault", L::hardware, S::error, R::primary,
        R"re(DMAR: \[DMA (?P<access>Read|Write)(?: NO_PASID)?\] Request device \[(?P<pci>[0-9a-fA-F:.]+)\])re",
        "IOMMU (VT-d) blocked a DMA {access} from {pci}", {{"iommu_blocks_p2p", 12}},
        "DMA remapping fault: peer-to-peer traffic redirected/blocked by the IOMMU");
  b.add("kernel.iommu.amd_page_fault", L::hardware, S::error, R::primary,
        R"re(AMD-Vi: Event logged \[IO_PAGE_FAULT(?: device=(?P<pci>[0-9a-fA-F:.]+))?)re",
        "AMD IOMMU page fault from {pci}", {{"iommu_blocks_p2p", 12}}, "IOMMU blocked a device DMA");

  // ------------------------------------------------------------ pasted diagnostics
  b.add("paste.ib_port_down", L::hardware, S::error, R::primary,
        R"re(^\s*state:\s+(?:1: DOWN|PORT_DOWN \(1\)))re", "IB port state DOWN (ibstatus / ibv_devinfo)",
        {{"nic_port_down", 6}}, "A pasted port status shows the port down");
  b.add("paste.ib_port_state", L::transport, S::info, R::context,
        R"re(^\s*state:\s+(?P<port_state>\d: (?:INIT|ARMED|ACTIVE)|PORT_(?:INIT|ARMED|ACTIVE) \(\d\)))re",
        "IB port state {port_state}", {}, "Pasted port status");
  b.add("paste.ib_rate", L::transport, S::info, R::context, R"re(^\s*rate:\s+(?P<rate>\d+ Gb/sec.*))re",
        "IB port rate {rate}", {}, "Pasted ibstatus rate");
  b.add("paste.lspci_acs_enabled", L::hardware, S::warning, R::primary, R"re(ACSCtl:\s+SrcValid\+)re",
        "PCIe ACS source validation enabled on a bridge", {{"pcie_acs_p2p_blocked", 6}},
        "ACS redirects P2P traffic to the root complex (slow or hang)");
  b.add("paste.nvidia_smi_topo", L::hardware, S::info, R::context,
        R"re(^\s*GPU0\s+GPU1\s.*CPU Affinity)re", "nvidia-smi topo -m matrix present", {},
        "Pasted topology matrix");
  b.add("paste.ip_link", L::system_config, S::info, R::context,
        R"re((?P<ifname>[\w.@-]+): <(?P<flags>[A-Z_,]*)> mtu (?P<mtu>\d+))re", "interface {ifname} <{flags}> mtu {mtu}",
        {}, "Pasted `ip addr` / `ip link` output");

  return std::move(b.v);
}

}  // namespace

const std::vector<Signature>& builtin_signatures() {
  static const std::vector<Signature> catalogue = build();
  return catalogue;
}

}  // namespace ccdiag::logs
