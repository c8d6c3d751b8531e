#include "analysis/tree/catalogue.hpp"

#include <algorithm>
#include <map>

namespace ccdiag {

namespace {

using L = Layer;

// Layer priors for a hang (anchors-summary C3): GPU hardware 0.35, framework
// 0.25, network 0.20, host/config 0.15, NCCL software 0.05. Each cause gets a
// share of its layer's mass; the shares are judgement, documented here so they
// can be calibrated on site data.
std::vector<CauseInfo> build() {
  std::vector<CauseInfo> c;
  auto add = [&c](std::string id, Layer l, double prior, std::string desc, std::string sup, std::string counter,
                  std::vector<CauseStep> steps) {
    c.push_back(CauseInfo{std::move(id), l, std::move(desc), prior, std::move(sup), std::move(counter),
                          std::move(steps)});
  };

  // ---- framework (0.25) ----
  add("rank_skips_collective", L::framework, 0.05,
      "One or more ranks never issue a collective the others are waiting in (e.g. a collective inside a "
      "rank-0-only branch).",
      "Watchdog timeout at a fixed program point; flight recorder shows ranks missing from a collective they "
      "never called; stacks show the missing rank outside any collective.",
      "All ranks entered the collective (flight recorder: all ranks started, none completed); hardware or "
      "transport errors on the culprit.",
      {{"Dump the flight recorder on every rank and find the first collective some ranks never issued",
        "TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 <relaunch>; ccdiag fr <dump-dir>"},
       {"Look for collectives inside rank-conditional code (if rank == 0: ...) at the hang point",
        "ccdiag stacks --ranks"}});
  add("mismatched_collectives", L::framework, 0.04,
      "Ranks issue different collectives (type, size, dtype or order) at the same sequence number.",
      "TORCH_DISTRIBUTED_DEBUG=DETAIL 'Detected mismatch between collectives'; flight recorder type/size "
      "mismatch; NCCL 'message truncated' on a socket.",
      "Identical fingerprints on every rank at the hang point.",
      {{"Re-run with collective fingerprint checking to name the first mismatching call",
        "TORCH_DISTRIBUTED_DEBUG=DETAIL <relaunch>"},
       {"Compare the per-rank collective sequence around the mismatch", "ccdiag fr <dump-dir> --json"}});
  add("wrong_process_group", L::framework, 0.02,
      "A collective is issued on a different process group on some ranks (e.g. a sub-group vs the default "
      "group), so groups wait on each other.",
      "Flight recorder: a group's ranks stuck while their peers are in another group's collective.",
      "All ranks of each group at the same sequence number.",
      {{"Check which process group each stuck rank's last collective used", "ccdiag fr <dump-dir>"}});
  add("wrong_device_binding", L::framework, 0.02,
      "Ranks are bound to the wrong GPUs (two ranks on one GPU, or LOCAL_RANK not used for the device).",
      "NCCL 'Duplicate GPU detected' / 'Multiple ranks ... same GPU'; several ranks with the same busId in "
      "NCCL init lines; CUDA_VISIBLE_DEVICES mapping.",
      "Distinct busIds for every local rank.",
      {{"Set the device from LOCAL_RANK before creating the process group",
        "python -c 'import torch,os; torch.cuda.set_device(int(os.environ[\"LOCAL_RANK\"]))'"},
       {"List ranks with their GPUs on the host", "ccdiag ranks"}});
  add("user_code_bug", L::framework, 0.03,
      "An exception or bug in the training script on one rank (the others then wait in a collective).",
      "Python traceback or non-zero child exit on the first failing rank before peers time out.",
      "No exception on any rank; hardware errors first.",
      {{"Read the first failing rank's traceback (torchrun prints it under 'Root Cause')", "ccdiag logs <log-dir>"}});
  add("gpu_memory_exhausted", L::framework, 0.02,
      "A rank ran out of GPU memory (CUDA OOM) and failed or stalled; peers time out.",
      "torch.OutOfMemoryError / 'CUDA out of memory' / NCCL 'Cuda failure out of memory' on the culprit.",
      "No OOM message; memory headroom in NVML.",
      {{"Check memory headroom on the culprit GPU", "nvidia-smi -q -d MEMORY -i {gpu}"},
       {"Reduce batch size or enable expandable segments", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"}});
  add("straggler_or_timeout_too_short", L::framework, 0.03,
      "All ranks reach the collective but one arrives late (slow dataloader, checkpoint, GC, slow GPU), or "
      "the timeout is shorter than a legitimate long step.",
      "Flight recorder: one rank consistently last to enqueue; watchdog timeout with no other error; timeout "
      "value small.",
      "A rank that never arrives; transport or hardware errors.",
      {{"Find the slow rank from flight-recorder enqueue times", "ccdiag fr <dump-dir>"},
       {"Raise the process-group timeout if steps legitimately exceed it",
        "torch.distributed.init_process_group(..., timeout=datetime.timedelta(minutes=30))"}});
  add("rank_process_died", L::framework, 0.03,
      "A rank's process died (crash, signal, OOM killer, node reboot); the others wait for it or see "
      "'remote process exited'.",
      "torchrun 'exitcode' / 'Signal N' for one rank; OOM killer line; peers' 'Connection closed by remote "
      "peer' after it.",
      "All rank processes alive on every host.",
      {{"Find the first rank that exited and why (exit code, signal, OOM killer)", "ccdiag logs <log-dir>"},
       {"Check the kernel log of that host for the OOM killer or Xid", "ccdiag probe kernel --since 1h"}});
  add("rank_stuck_in_host_code", L::framework, 0.03,
      "A rank is stuck outside NCCL in its own host code: dataloader, I/O on a hung filesystem, a Python "
      "deadlock, checkpointing.",
      "Stack census: culprit rank's main thread in I/O, a lock or dataloader while the others wait in a "
      "collective; D-state task.",
      "Culprit's main thread inside a collective wait.",
      {{"Dump native and Python stacks of every rank and look at the odd one out", "ccdiag stacks --ranks"}});

  // ---- nccl (0.05) ----
  add("nccl_bug", L::nccl, 0.015,
      "A defect in NCCL itself (wrong topology decision, internal error, known issue of this version).",
      "ncclInternalError without a platform cause; behaviour matching a known NCCL issue for this version.",
      "A platform or configuration cause that explains the failure.",
      {{"Retry with the latest NCCL and report with NCCL_DEBUG=INFO logs",
        "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH <relaunch>"}});
  add("nccl_version_mismatch", L::nccl, 0.01,
      "Ranks or hosts run different NCCL (or CUDA/driver) versions.",
      "'Mismatched NCCL version detected'; different 'NCCL version' lines or libnccl versions across hosts.",
      "The same NCCL version on every rank.",
      {{"Compare NCCL versions across hosts", "ccdiag diagnose <bundle-dir>  # one bundle per host"},
       {"Pin one NCCL build in the job image", "python -c 'import torch; print(torch.cuda.nccl.version())'"}});
  add("net_plugin_mismatch", L::nccl, 0.005,
      "The NCCL network plugin is missing, of the wrong ABI, or differs across hosts.",
      "'Failed to initialize any NET plugin'; NET/Plugin load failures; plugin differs per host.",
      "The same plugin loaded everywhere.",
      {{"Check which net plugin each rank loaded", "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET <relaunch>"}});
  add("nvls_path_failure", L::nccl, 0.005,
      "NVLink SHARP (NVLS) multicast setup or operation failed (fabric manager, NVSwitch, IMEX).",
      "'Failed to bind NVLink SHARP (NVLS) Multicast memory'; hang in NVLS setup; MNNVL/IMEX warnings.",
      "NVLS disabled or not in use.",
      {{"Confirm by disabling NVLS", "NCCL_NVLS_ENABLE=0 <relaunch>"},
       {"Check the fabric manager and NVSwitch state", "nvidia-smi -q | grep -A4 Fabric"}});
  add("nccl_config_error", L::nccl, 0.01,
      "A bad NCCL_* setting (algorithm/protocol restriction, disabled transports, wrong HCA filter).",
      "'No algorithm/protocol available'; 'No transport found'; NCCL_* set by environment differently across "
      "ranks.",
      "Default NCCL settings.",
      {{"List the NCCL_* variables each rank sets and drop the unusual ones", "ccdiag ranks --json"}});
  add("cuda_graph_or_stream_misuse", L::nccl, 0.005,
      "CUDA graph capture or stream usage that NCCL does not support (mixed captured/uncaptured comms in a "
      "group, several GPUs per process in graphs).",
      "NCCL warnings about graph capture in a group; hang only with CUDA graphs on.",
      "Graphs disabled.",
      {{"Confirm by disabling CUDA graphs in the framework", "<relaunch without cuda graphs>"}});

  // ---- transport (0.20 network share, split) ----
  add("ib_transport_retry_exceeded", L::transport, 0.05,
      "InfiniBand/RoCE transport retries exhausted (IBV_WC_RETRY_EXC_ERR, status 12): the peer NIC did not "
      "acknowledge (link down, port flapping, remote node gone, congestion).",
      "'NET/IB: Got completion from peer ... status=12'; link_downed / symbol errors on the NIC; the peer "
      "named in the error.",
      "A rank that died before the error (then it is a cascade).",
      {{"Test the NIC pair named in the error", "ib_write_bw -d {nic} --report_gbits  # then on the peer: ib_write_bw -d <peer-nic> {host}"},
       {"Check the port error counters on both ends", "ccdiag probe rdma --interval 5"}});
  add("roce_gid_index_mismatch", L::transport, 0.015,
      "RoCE GID index / RoCE version differs from what the fabric routes (wrong NCCL_IB_GID_INDEX, IPv4 vs "
      "IPv6 GID, v1 vs v2).",
      "ibv_modify_qp 'Invalid argument' to RTR; GID table changed events; different GID types across hosts.",
      "Native InfiniBand link layer.",
      {{"Show the GID table of the NIC and pick the RoCE v2 IPv4 entry", "show_gids {nic}"},
       {"Set the GID index explicitly", "NCCL_IB_GID_INDEX=3 <relaunch>"}});
  add("mtu_mismatch", L::transport, 0.01,
      "Path MTU differs between the two ends of a connection (netdev MTU or IB active_mtu skew).",
      "Different MTU across hosts in bundles; QP modify failures with MTU; RoCE drops.",
      "One MTU everywhere.",
      {{"Compare MTUs across hosts", "ccdiag diagnose <bundle-dir>  # one bundle per host"}});
  add("unusable_hca_selected", L::transport, 0.02,
      "NCCL selected an RDMA device that exists but cannot be used from this environment (container without "
      "the device, MOFED mismatch, wrong port).",
      "ibv_* calls fail with 'No such device' / 'Operation not supported' at connection setup on a named HCA.",
      "The same HCA working in another job on this host.",
      {{"Exclude the HCA or select the usable ones", "NCCL_IB_HCA=^{nic} <relaunch>"},
       {"Compare rdma-core/MOFED in the container with the host", "ibv_devinfo -d {nic}"}});
  add("nic_pair_unreachable", L::transport, 0.02,
      "Two NICs cannot reach each other (different rails without cross-rail routing, partition key, "
      "routing).",
      "ibv_modify_qp 'Connection timed out' to RTR/RTS; completion errors only between specific NIC pairs.",
      "The pair passes ib_write_bw.",
      {{"Test the suspect NIC pair directly", "ib_write_bw -d {nic} --report_gbits"},
       {"Keep traffic on one rail", "NCCL_CROSS_NIC=0 <relaunch>"}});
  add("slow_link_or_nic", L::transport, 0.02,
      "A NIC, its PCIe path, a cable or a switch port on the job's path is persistently slow (degraded optics, "
      "congestion, a throttled NIC): the job runs, slowly.",
      "ccdiag perf: every communicator or channel that crosses one process's NIC is slower on the wire than its "
      "peers over many collectives; port_xmit_wait growing on that port.",
      "The slow communicators share no member; the ranks only arrive late (arrival skew).",
      {{"Test the named NIC with perftest against a healthy host",
        "ib_write_bw -d {nic} -F --report_gbits  # on a healthy peer; then on {host}: ib_write_bw -d {nic} -F --report_gbits <peer>"},
       {"Read the port's congestion and error counters twice", "ccdiag probe rdma --interval 10"}});
  add("qp_error_state", L::transport, 0.02,
      "A queue pair of the job went to the error state (fatal async event, WR flush errors).",
      "RDMA netlink: QPs in ERR for the job's pid; NCCL 'async fatal event on QP'; status 5 WR_FLUSH_ERR.",
      "All QPs in RTS.",
      {{"List the job's QPs and their states", "rdma resource show qp"}});
  add("socket_connection_failure", L::transport, 0.02,
      "TCP connections between ranks (bootstrap, proxy, socket transport) fail or are reset.",
      "'Connection reset by peer', 'Connection refused', socket connect failures after init.",
      "A peer process that died first (then it is rank_process_died).",
      {{"Check which interface NCCL uses and test TCP between the hosts", "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET <relaunch>"}});
  add("bootstrap_unreachable", L::transport, 0.02,
      "Ranks cannot reach the bootstrap root or each other's bootstrap sockets (MASTER_ADDR/port, routing).",
      "'connect to ... failed', 'exceeded error retry count' during init; TCPStore/rendezvous timeouts.",
      "Init completes on all ranks.",
      {{"Check that MASTER_ADDR resolves and the port is reachable from every host", "nc -vz $MASTER_ADDR $MASTER_PORT"}});

  // ---- hardware (0.35 GPU + part of network) ----
  add("gpu_fell_off_bus", L::hardware, 0.06,
      "A GPU fell off the PCIe bus (Xid 79) or is lost to NVML.",
      "Xid 79 / 'GPU has fallen off the bus'; NVML GPU lost; CUDA errors on the rank bound to it.",
      "GPU visible and healthy in NVML.",
      {{"Drain the host and reset or replace the GPU", "nvidia-smi -q -i {gpu}"},
       {"Check PCIe AER errors on the GPU's path", "ccdiag probe pcie"}});
  add("gpu_xid_nvlink_fault", L::hardware, 0.04,
      "NVLink error reported by the GPU driver (Xid 74) or NVSwitch (SXid).",
      "Xid 74 / SXid on the culprit GPU; NVLink error counters rising.",
      "No NVLink errors.",
      {{"Check NVLink state and error counters", "nvidia-smi nvlink -s -i {gpu}; nvidia-smi nvlink -e -i {gpu}"},
       {"Drain the node for NVLink diagnosis", "dcgmi diag -r 3"}});
  add("gpu_ecc_or_memory_fault", L::hardware, 0.08,
      "Uncorrectable ECC / HBM / SRAM error or row-remapping failure on a GPU (Xid 48, 63, 64, 94, 95).",
      "Xid 48/63/64/94/95; NVML volatile uncorrectable ECC; remapping pending or failed.",
      "Zero uncorrectable ECC errors.",
      {{"Read ECC and row-remapping state", "nvidia-smi -q -d ECC,ROW_REMAPPER -i {gpu}"},
       {"Reset the GPU (or drain and RMA if remapping failed)", "nvidia-smi -r -i {gpu}"}});
  add("gpu_hung_kernel", L::hardware, 0.05,
      "A GPU stopped making progress (Xid 8/13/31/43/109/119/120: timeout, exception, GSP error) or a "
      "kernel never completes.",
      "Xid 8/13/31/43/109/119/120 on the culprit; GPU at 100% utilisation with no progress on one rank.",
      "Clean kernel log for the GPU.",
      {{"Check the GPU and GSP state", "nvidia-smi -q -i {gpu}"},
       {"Reset the GPU once the job is stopped", "nvidia-smi -r -i {gpu}"}});
  add("nvlink_down_or_degraded", L::hardware, 0.03,
      "One or more NVLinks are down or degraded (fewer active links, replay/recovery errors rising).",
      "NVML link inactive; CRC/replay/recovery counters rising; NCCL 'P2P is disabled between NVLINK "
      "connected GPUs'.",
      "All links active with steady counters.",
      {{"Show NVLink status of the GPU", "nvidia-smi nvlink -s -i {gpu}"},
       {"Run an NVLink bandwidth test on the node", "nvbandwidth -t device_to_device_memcpy_read_ce"}});
  add("pcie_acs_p2p_blocked", L::hardware, 0.02,
      "PCIe ACS redirects peer-to-peer traffic to the root complex: P2P / GPUDirect RDMA hangs or crawls.",
      "ACSCtl SrcValid+/ReqRedir+ on bridges between GPUs or GPU and NIC; LOC_PROT_ERR completion errors.",
      "ACS off on every bridge on the path.",
      {{"Check ACS control on the bridges between the GPUs", "lspci -vvv | grep -E 'ACSCtl'"},
       {"Confirm by disabling P2P", "NCCL_P2P_DISABLE=1 <relaunch>"}});
  add("iommu_blocks_p2p", L::hardware, 0.02,
      "The IOMMU (VT-d / AMD-Vi) in translated mode blocks or redirects GPU peer-to-peer DMA: P2P "
      "collectives hang with GPUs at 100% and no NCCL error.",
      "IOMMU enabled (intel_iommu=on without iommu=pt, iommu groups present); DMAR faults; hang after init "
      "with P2P transport; GPUs behind a PCIe switch.",
      "iommu=pt or IOMMU off; P2P bandwidth test passes.",
      {{"Check the kernel command line and DMAR faults", "cat /proc/cmdline; dmesg | grep -i -E 'DMAR|IOMMU'"},
       {"Confirm by disabling P2P; fix with iommu=pt or intel_iommu=off", "NCCL_P2P_DISABLE=1 <relaunch>"}});
  add("pcie_link_degraded", L::hardware, 0.02,
      "A PCIe link trained below its capability (lost width, or lost speed under load) or reports AER errors.",
      "current_link_width < max_link_width; AER correctable/fatal counters rising.",
      "Link at max width and speed under load.",
      {{"Compare current and max link speed/width on the GPU and NIC paths", "ccdiag probe pcie"}});
  add("pcie_topology_misdetected", L::hardware, 0.01,
      "NCCL's view of the PCIe/host topology is wrong (virtualised topology, host identity collision, wrong "
      "NCCL_TOPO_FILE), so it picks an impossible or slow path.",
      "P2P/IPC or SHM between ranks on different hosts; nNodes lower than the real host count; NET between "
      "GPUs of one switch.",
      "Transports that match the physical placement.",
      {{"Dump NCCL's detected topology and compare with the hardware", "NCCL_TOPO_DUMP_FILE=/tmp/topo.xml <relaunch>"},
       {"Give each host a unique identity", "NCCL_HOSTID=$(hostname -f) <relaunch>"}});
  add("gpu_driver_p2p_bug", L::hardware, 0.01,
      "A GPU driver defect in peer-to-peer (CUDA IPC / P2P) between specific GPUs.",
      "P2P failures with no ACS/IOMMU cause on a driver version with a known P2P issue.",
      "P2P works after a driver change.",
      {{"Test P2P between the GPU pair", "ccdiag probe p2p"}});
  add("nic_link_flapping", L::hardware, 0.03,
      "A NIC port or cable flaps (link down/up), causing retries and completion errors.",
      "link_downed / carrier_changes counters increasing; port error async events; mlx5 port state changes in "
      "the kernel log.",
      "Steady counters over the sampling interval.",
      {{"Sample the port counters twice and check link_downed / symbol_error", "ccdiag probe rdma --interval 10"},
       {"Reseat or replace the cable / transceiver on the flapping port", "mlxlink -d {nic} -m"}});
  add("nic_port_down", L::hardware, 0.02,
      "An RDMA port is down (state DOWN / phys_state Polling or Disabled).",
      "Port state not ACTIVE; phys_state not LinkUp; NCCL 'No device found' or completion errors on it.",
      "Port ACTIVE and LinkUp.",
      {{"Show the port state", "ibstat {nic}"}});

  // ---- system-config (0.15 host/OS) ----
  add("container_shm_too_small", L::system_config, 0.03,
      "/dev/shm is too small (container default 64 MB), so NCCL's shared-memory transport cannot create its "
      "segments.",
      "NCCL 'failed to extend /dev/shm/nccl-* ... No space left on device'; /dev/shm size under 1 GB.",
      "Large /dev/shm; no shm errors.",
      {{"Give the container a larger /dev/shm", "docker run --shm-size=16g ...  # k8s: emptyDir {medium: Memory}"},
       {"Workaround only: disable the SHM transport", "NCCL_SHM_DISABLE=1 <relaunch>"}});
  add("wrong_network_interface", L::system_config, 0.025,
      "NCCL_SOCKET_IFNAME or GLOO_SOCKET_IFNAME (or the default choice) names an interface that is missing, "
      "down or unroutable on some hosts.",
      "NCCL_SOCKET_IFNAME set but no 'Bootstrap : Using' line; 'no socket interface found'; Gloo's 'Unable to "
      "find address for'; bad address family errors.",
      "The interface exists and is used.",
      {{"List interfaces on every host and set NCCL_SOCKET_IFNAME (GLOO_SOCKET_IFNAME for Gloo) to a routable one",
        "ip -br addr"}});
  add("hostname_resolves_to_loopback", L::system_config, 0.01,
      "The hostname resolves to 127.0.x.x, so peers are told to connect to loopback.",
      "Bootstrap or TCPStore addresses in 127.0.0.0/8 on multi-host jobs.",
      "Routable addresses in bootstrap lines.",
      {{"Check what the hostname resolves to", "getent hosts $(hostname)"}});
  add("duplicate_hostname_across_nodes", L::system_config, 0.005,
      "Two or more nodes share a host name (e.g. cloned images), so NCCL takes ranks on another machine for "
      "local ones and picks intra-node transports (P2P/IPC, SHM) between machines.",
      "The same host name in the NCCL prefixes of ranks that must be on different machines (two ranks on one "
      "GPU ordinal); P2P/SHM channel edges between them; CUDA IPC or shm open failures across nodes.",
      "Distinct host names on every node (a collision of different names is nccl_bug).",
      {{"Compare host names and boot ids across the nodes", "hostname; cat /proc/sys/kernel/random/boot_id  # on every node"},
       {"Give every node a unique host name (or host id)", "hostnamectl set-hostname <unique-name>  # or NCCL_HOSTID=<unique> <relaunch>"}});
  add("firewall_blocked_ports", L::system_config, 0.01,
      "A firewall blocks the ephemeral ports NCCL bootstrap and proxies use between hosts.",
      "Connect timeouts between hosts that resolve and ping; 'No route to host' / 'Connection timed out'.",
      "TCP to ephemeral ports works between the hosts.",
      {{"Test a TCP connection on a high port between the hosts", "nc -l 40000 & nc -vz <peer> 40000"}});
  add("fabric_manager_not_running", L::system_config, 0.01,
      "NVIDIA Fabric Manager is not running on an NVSwitch system, so NVLink P2P / NVLS is unavailable.",
      "NVML fabric state not completed; CUDA error 802 'system not yet initialized'; P2P disabled on NVLink "
      "GPUs.",
      "Fabric Manager active.",
      {{"Check the fabric manager service", "systemctl status nvidia-fabricmanager"}});
  add("fabric_manager_state", L::system_config, 0.005,
      "Fabric Manager runs but the fabric is in a bad state (degraded NVSwitch, partition not activated).",
      "NVML fabric status not success; SXid from NVSwitch.",
      "Fabric state completed with success.",
      {{"Query the fabric state of every GPU", "nvidia-smi -q | grep -A4 Fabric"}});
  add("driver_library_mismatch", L::system_config, 0.01,
      "The user-space driver library (libcuda / NVML) does not match the kernel module.",
      "'Driver/library version mismatch'; NVML_ERROR_LIB_RM_VERSION_MISMATCH; CUDA error 803.",
      "Matching versions.",
      {{"Compare the kernel module and library versions", "cat /proc/driver/nvidia/version; nvidia-smi"}});
  add("memlock_limit_too_low", L::system_config, 0.01,
      "The locked-memory limit is too low for RDMA registration (ibv_reg_mr / ibv_create_qp fail with ENOMEM).",
      "'Call to ibv_reg_mr failed' / 'ibv_create_qp failed ... Cannot allocate memory'; low Max locked memory "
      "in /proc/<pid>/limits.",
      "Unlimited memlock.",
      {{"Raise the memlock limit for the job", "ulimit -l unlimited  # docker: --ulimit memlock=-1"}});
  add("gpudirect_rdma_module_missing", L::system_config, 0.01,
      "GPUDirect RDMA is unavailable: nvidia-peermem not loaded and no dma-buf support, so NCCL falls back or "
      "fails to register GPU memory.",
      "'GPU Direct RDMA Disabled'; ibv_reg_mr failures on GPU memory; no nvidia_peermem module.",
      "nvidia_peermem loaded or dma-buf in use.",
      {{"Load the peer-memory module", "modprobe nvidia-peermem && lsmod | grep nvidia_peermem"}});
  add("removeipc_deletes_shm", L::system_config, 0.005,
      "systemd-logind RemoveIPC=yes deletes NCCL's shared-memory segments when the user's last session ends.",
      "NCCL 'unlink shared memory ... failed' / missing /dev/shm/nccl-* segments; RemoveIPC=yes.",
      "RemoveIPC=no.",
      {{"Disable RemoveIPC", "echo RemoveIPC=no >> /etc/systemd/logind.conf && systemctl restart systemd-logind"}});
  // Not reachability: the store/bootstrap server could not even listen. A
  // stale job (or a second one started with the same MASTER_PORT) holds it.
  add("rendezvous_port_in_use", L::system_config, 0.005,
      "The rendezvous (TCPStore / c10d) or bootstrap port is already in use on the host that must listen on it: a "
      "previous job still running or a second job launched with the same MASTER_PORT.",
      "'The server socket has failed to listen ... EADDRINUSE' / 'Address already in use' when the job starts; no "
      "rank gets past rendezvous.",
      "The port is free on the master host before launch.",
      {{"Pick a free port for the relaunch", "MASTER_PORT=$((20000 + RANDOM % 20000)) <relaunch>  # torchrun --master-port"}});
  add("hostname_not_resolvable", L::system_config, 0.005,
      "A host name the job connects to (MASTER_ADDR, the rendezvous endpoint, a peer's name) does not resolve on "
      "this host: a typo, a name only another cluster's DNS or /etc/hosts knows, a pod name before its DNS "
      "record exists.",
      "'gai error: -2 - Name or service not known', 'Temporary failure in name resolution', 'No address "
      "associated with hostname' while connecting to the rendezvous; the ranks retry until the timeout.",
      "The name resolves on every host.",
      {{"Resolve the rendezvous host name on this host", "getent ahosts <master-addr>"}});
  return c;
}

}  // namespace


// Confirming commands, filled with the culprit's fields: the nccl-tests /
// perftest / nvidia-smi / env-var experiment that proves or clears the cause
// on the suspect subset. Appended after each cause's own steps.
static const std::map<std::string, std::vector<CauseStep>>& confirming_steps() {
  static const std::map<std::string, std::vector<CauseStep>> t = {
      {"rank_skips_collective",
       {{"Confirm with fingerprint checking: the first mismatching or missing collective is named",
         "TORCH_DISTRIBUTED_DEBUG=DETAIL TORCH_NCCL_ASYNC_ERROR_HANDLING=1 <relaunch>"}}},
      {"mismatched_collectives",
       {{"Print each rank's collective sequence around seq {seq}", "ccdiag fr <dump-dir> --json | jq '.findings[]'"}}},
      {"wrong_process_group",
       {{"Dump the flight recorder and compare process groups at the hang", "TORCH_NCCL_DUMP_ON_TIMEOUT=1 <relaunch>; ccdiag fr <dump-dir>"}}},
      {"wrong_device_binding",
       {{"Check which GPU each local rank opened on {host}", "nvidia-smi --query-compute-apps=pid,gpu_bus_id --format=csv"}}},
      {"user_code_bug", {{"Re-run the failing rank's code path on one GPU to reproduce", "python train.py --max-steps 1  # on {host}"}}},
      {"gpu_memory_exhausted", {{"Watch memory on the culprit GPU during the step", "nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv -l 1 -i {gpu}"}}},
      {"straggler_or_timeout_too_short",
       {{"Measure the collective alone on the job's GPUs to rule out the fabric", "all_reduce_perf -b 8 -e 8G -f 2 -g {ngpus}"}}},
      {"rank_process_died", {{"Look for the OOM killer and Xids on {host}", "journalctl -k --since -2h | grep -E 'Out of memory|Xid|segfault'"}}},
      {"rank_stuck_in_host_code", {{"Dump Python stacks of rank {rank} on {host}", "py-spy dump --native --pid {pid}"}}},
      {"nccl_bug",
       {{"Reproduce outside the framework with nccl-tests on the same hosts", "mpirun -np <n> -H <hosts> all_reduce_perf -b 8 -e 8G -f 2 -g 1"},
        {"If hosts may share an identity, give each a unique one", "NCCL_HOSTID=$(hostname -f) <relaunch>; cat /proc/sys/kernel/random/boot_id  # on every host"}}},
      {"nccl_version_mismatch", {{"Print the NCCL version every rank loads on {host}", "NCCL_DEBUG=VERSION <relaunch>  # 'NCCL version x.y.z' per rank"}}},
      {"net_plugin_mismatch",
       {{"List the net plugin on {host} and on a good host", "ldconfig -p | grep -E 'libnccl-net'; echo $NCCL_NET_PLUGIN"},
        {"Confirm by forcing NCCL's internal IB transport everywhere", "NCCL_NET=IB <relaunch>"}}},
      {"nvls_path_failure", {{"Confirm NVLS works on {host} alone", "NCCL_NVLS_ENABLE=1 all_reduce_perf -b 8 -e 8G -f 2 -g 8"}}},
      {"nccl_config_error", {{"Run nccl-tests with the job's NCCL_* settings, then without them", "env | grep ^NCCL_; all_reduce_perf -b 8 -e 8G -f 2 -g {ngpus}"}}},
      {"cuda_graph_or_stream_misuse", {{"Confirm with graph capture off", "TORCH_NCCL_BLOCKING_WAIT=1 <relaunch with torch.compile mode=default / no CUDA graphs>"}}},
      {"ib_transport_retry_exceeded",
       {{"Measure the suspect NIC pair with perftest (server on the peer, client on {host})",
         "ib_write_bw -d {nic} -F --report_gbits  # peer; then on {host}: ib_write_bw -d {nic} -F --report_gbits <peer>"},
        {"Check the port's error counters on {host}", "perfquery -x -C {nic} -P {port}"}}},
      {"roce_gid_index_mismatch",
       {{"Show the GID table of {nic} on {host} and on a good host", "show_gids {nic}"},
        {"Confirm with the RoCE v2 GID index set explicitly on every host", "NCCL_IB_GID_INDEX=3 all_reduce_perf -b 8 -e 8G -f 2 -g 1"}}},
      {"mtu_mismatch",
       {{"Read the active MTU on {host}", "ibv_devinfo -d {nic} | grep -E 'active_mtu|max_mtu'"},
        {"Confirm with a perftest at the common MTU", "ib_write_bw -d {nic} -m 1024 --report_gbits <peer>"}}},
      {"unusable_hca_selected", {{"Check that {nic} opens and has an active port inside the container", "ibv_devinfo -d {nic}; rdma link show"}}},
      {"nic_pair_unreachable",
       {{"Test the pair with perftest and with a plain ping over the RoCE interface", "ib_write_bw -d {nic} --report_gbits <peer>; ping -I <roce-netdev> <peer>"}}},
      {"qp_error_state", {{"Read the QP states of the job's pid on {host}", "rdma resource show qp | grep -E 'pid {pid}|state ERR'"}}},
      {"socket_connection_failure", {{"Test a TCP connection between the hosts on a high port", "nc -l 45000  # on the peer; then on {host}: nc -vz <peer> 45000"}}},
      {"bootstrap_unreachable", {{"Check the rendezvous endpoint from rank {rank}'s host", "getent hosts $MASTER_ADDR; nc -vz $MASTER_ADDR $MASTER_PORT"}}},
      {"gpu_fell_off_bus", {{"Confirm the GPU is gone from the bus on {host}", "nvidia-smi -q -d PERFORMANCE -i {gpu}; lspci -s {gpu} -vv | grep -E 'LnkSta|UESta'"}}},
      {"gpu_xid_nvlink_fault",
       {{"Read the NVLink error counters of {gpu} on {host}", "nvidia-smi nvlink -e -i {gpu}"},
        {"Confirm with an NVLink-bound collective on that host", "all_reduce_perf -b 8 -e 8G -f 2 -g 8"}}},
      {"gpu_ecc_or_memory_fault", {{"Read ECC counters and row remapping of {gpu} on {host}", "nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT -i {gpu}"}}},
      {"gpu_hung_kernel", {{"Check for a stuck context and GSP state on {host}", "nvidia-smi -q -d PERFORMANCE,CLOCK -i {gpu}; dcgmi diag -r 1"}}},
      {"nvlink_down_or_degraded",
       {{"Read the link states of {gpu} on {host}", "nvidia-smi nvlink -s -i {gpu}"},
        {"Measure the node's NVLink collective bandwidth", "all_reduce_perf -b 8 -e 8G -f 2 -g 8"}}},
      {"pcie_acs_p2p_blocked",
       {{"Confirm P2P on the suspect GPUs {gpu} with nccl-tests (hangs or is slow while ACS redirects)",
         "CUDA_VISIBLE_DEVICES={gpu} all_reduce_perf -b 8 -e 8G -f 2 -g {ngpus}"},
        {"Then confirm the fix: same test with P2P off", "NCCL_P2P_DISABLE=1 CUDA_VISIBLE_DEVICES={gpu} all_reduce_perf -b 8 -e 8G -f 2 -g {ngpus}"}}},
      {"iommu_blocks_p2p",
       {{"Confirm P2P on the suspect GPUs {gpu} with nccl-tests (hangs while the IOMMU translates)",
         "CUDA_VISIBLE_DEVICES={gpu} all_reduce_perf -b 8 -e 8G -f 2 -g {ngpus}"},
        {"Then the same test with P2P off: it completes when P2P is the problem",
         "NCCL_P2P_DISABLE=1 CUDA_VISIBLE_DEVICES={gpu} all_reduce_perf -b 8 -e 8G -f 2 -g {ngpus}"},
        {"Separate IOMMU from ACS: check ACS on the bridges above the GPUs", "lspci -vvv | grep -E 'ACSCtl'"}}},
      {"pcie_link_degraded", {{"Read the link status of {gpu} on {host}", "lspci -s {gpu} -vv | grep -E 'LnkCap|LnkSta'; nvidia-smi -q -d PERFORMANCE -i {gpu}"}}},
      {"pcie_topology_misdetected", {{"Compare NCCL's topology with the hardware on {host}", "nvidia-smi topo -m; NCCL_TOPO_DUMP_FILE=/tmp/topo.xml all_reduce_perf -b 8 -e 128M -f 2 -g {ngpus}"}}},
      {"gpu_driver_p2p_bug",
       {{"Confirm P2P on the suspect GPUs {gpu}", "CUDA_VISIBLE_DEVICES={gpu} all_reduce_perf -b 8 -e 8G -f 2 -g {ngpus}"},
        {"Check the driver version against known P2P fixes", "cat /proc/driver/nvidia/version"}}},
      {"nic_link_flapping", {{"Watch link_downed on {nic} port {port} of {host}", "watch -n 5 cat /sys/class/infiniband/{nic}/ports/{port}/counters/link_downed"}}},
      {"nic_port_down", {{"Read the port state of {nic} on {host}", "cat /sys/class/infiniband/{nic}/ports/{port}/state /sys/class/infiniband/{nic}/ports/{port}/phys_state"}}},
      {"container_shm_too_small", {{"Check /dev/shm inside the container on {host}", "df -h /dev/shm"}}},
      {"wrong_network_interface",
       {{"List the interfaces and addresses on {host}", "ip -br addr"},
        {"Confirm with an interface that exists and routes between hosts", "NCCL_SOCKET_IFNAME=<routable-if> NCCL_DEBUG=INFO <relaunch>  # expect 'Bootstrap : Using <if>:<ip>'"}}},
      {"hostname_resolves_to_loopback", {{"Check /etc/hosts on {host}", "grep -n \"$(hostname)\" /etc/hosts"}}},
      {"firewall_blocked_ports", {{"List the input rules on {host}", "nft list ruleset | grep -E 'policy|dport'  # or: iptables -S INPUT"}}},
      {"fabric_manager_not_running", {{"Start the fabric manager and check GPU fabric state on {host}", "systemctl start nvidia-fabricmanager; nvidia-smi -q -d FABRIC"}}},
      {"fabric_manager_state", {{"Read the fabric state of {gpu} on {host}", "nvidia-smi -q -d FABRIC -i {gpu}"}}},
      {"driver_library_mismatch", {{"Reboot {host} (or reload the module) so module and libraries match", "cat /proc/driver/nvidia/version; ls /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.*"}}},
      {"memlock_limit_too_low", {{"Read the job process's memlock limit on {host}", "grep 'Max locked memory' /proc/{pid}/limits"}}},
      {"gpudirect_rdma_module_missing", {{"Confirm GPUDirect RDMA with a GPU-memory perftest on {host}", "ib_write_bw -d {nic} --use_cuda=0 --report_gbits <peer>"}}},
      {"removeipc_deletes_shm", {{"Read logind's setting on {host}", "grep -E '^#?RemoveIPC' /etc/systemd/logind.conf; loginctl show-user $USER"}}},
      {"hostname_not_resolvable", {{"Check name resolution on {host}", "grep -E '^hosts:' /etc/nsswitch.conf; cat /etc/resolv.conf"}}},
      {"rendezvous_port_in_use", {{"See which process holds the port on {host}", "ss -ltnp 'sport = :<master-port>'  # a stale job: stop it"}}},
  };
  return t;
}

// What lies behind each TCP connectivity symptom, as shares of the incidents that
// show it (the rest: causes seen too rarely to name). Judgement from the
// labelling rules (../cases README: "where ccdiag's catalogue is finer, the
// label is the cause a good diagnosis names"), checked against the tuning
// part of tests/corpus: of the 5 tuning incidents whose evidence votes for
// bootstrap_unreachable, 3 are labelled wrong_network_interface; of the 6
// voting for socket_connection_failure, 3 wrong_network_interface and 1
// hostname_resolves_to_loopback. The QP symptoms (retry exceeded, QP in ERR)
// depend on the fabric (a RoCE GID index, an InfiniBand rail without a
// path), which the log facts read where the logs show it
// (log.roce_qp_unreached, log.ib_qp_unreached): those name the deeper cause
// directly; the shares below apply when those named nothing (on a fabric
// known to be InfiniBand the GID share is dropped). A QP in the error state
// is not split: a remote access error, a fatal async event and a flushed
// queue point at different causes, which the findings name themselves.
// docs/decision-tree.md.
static const std::map<std::string, std::vector<std::pair<std::string, double>>>& symptom_explanations() {
  static const std::map<std::string, std::vector<std::pair<std::string, double>>> t = {
      {"bootstrap_unreachable",
       {{"wrong_network_interface", 0.45}, {"firewall_blocked_ports", 0.2}, {"hostname_resolves_to_loopback", 0.15},
        {"duplicate_hostname_across_nodes", 0.05}}},
      {"socket_connection_failure",
       {{"wrong_network_interface", 0.35}, {"firewall_blocked_ports", 0.15}, {"hostname_resolves_to_loopback", 0.1}}},
      // Only reached when the fabric-specific facts (log.roce_qp_unreached, log.ib_qp_unreached, port and
      // counter evidence) named nothing deeper: the fabric is unknown, so the shares mix what lies behind
      // a retry-exceeded completion on RoCE (the GID index, the most common in public threads) and on
      // InfiniBand (a flapping port, a NIC pair without a route).
      {"ib_transport_retry_exceeded",
       {{"roce_gid_index_mismatch", 0.3}, {"nic_link_flapping", 0.2}, {"nic_pair_unreachable", 0.15},
        {"mtu_mismatch", 0.1}}},
  };
  return t;
}

const std::vector<CauseInfo>& cause_catalogue() {
  static const std::vector<CauseInfo> catalogue = [] {
    auto c = build();
    for (auto& cause : c) {
      const auto it = confirming_steps().find(cause.id);
      if (it != confirming_steps().end())
        cause.next_steps.insert(cause.next_steps.end(), it->second.begin(), it->second.end());
      const auto ex = symptom_explanations().find(cause.id);
      if (ex != symptom_explanations().end()) cause.explained_by = ex->second;
    }
    return c;
  }();
  return catalogue;
}

const CauseInfo* find_cause(std::string_view id) {
  for (const auto& c : cause_catalogue())
    if (c.id == id) return &c;
  return nullptr;
}

std::vector<NextStep> next_steps_for(const CauseInfo& cause, const Subject& culprit) {
  std::map<std::string, std::string> vars;
  if (culprit.host) vars["{host}"] = *culprit.host;
  if (culprit.rank) vars["{rank}"] = std::to_string(*culprit.rank);
  if (culprit.gpu) {
    vars["{gpu}"] = *culprit.gpu;
    // "0,1,2,3" from a P2P verdict: the GPU count for nccl-tests' -g.
    vars["{ngpus}"] = std::to_string(1 + std::count(culprit.gpu->begin(), culprit.gpu->end(), ','));
  }
  if (culprit.pid) vars["{pid}"] = std::to_string(*culprit.pid);
  if (culprit.nic) vars["{nic}"] = *culprit.nic;
  if (culprit.port) vars["{port}"] = std::to_string(*culprit.port);
  if (culprit.seq) vars["{seq}"] = std::to_string(*culprit.seq);
  if (culprit.process_group) vars["{process_group}"] = *culprit.process_group;
  auto fill = [&vars](std::string text, bool command) {
    for (const auto& [k, v] : vars)
      for (size_t p = text.find(k); p != std::string::npos; p = text.find(k, p + v.size())) text.replace(p, k.size(), v);
    // Unknown fields: "<host>" in commands (the user fills it in), words in prose.
    static const std::pair<const char*, const char*> unknown[] = {
        {"{host}", "the suspect host"}, {"{rank}", "the suspect rank"}, {"{gpu}", "the suspect GPUs"},
        {"{nic}", "the suspect NIC"},   {"{port}", "1"},                {"{seq}", "the hang"},
        {"{process_group}", "the stuck group"}, {"{pid}", "<pid>"},     {"{ngpus}", "<n>"}};
    for (const auto& [k, word] : unknown) {
      const std::string key = k;
      const std::string rep = command ? (key == "{port}" ? std::string("1") : "<" + key.substr(1, key.size() - 2) + ">")
                                      : std::string(word);
      for (size_t p = text.find(key); p != std::string::npos; p = text.find(key, p + rep.size())) text.replace(p, key.size(), rep);
    }
    return text;
  };
  std::vector<NextStep> out;
  for (const auto& s : cause.next_steps) out.push_back(NextStep{fill(s.action, false), fill(s.command, true)});
  return out;
}

}  // namespace ccdiag
