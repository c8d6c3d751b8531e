// The tree's log facts: structural facts and mechanism signals from NCCL,
// PyTorch and torchrun lines as those programs print them.
#include <catch2/catch.hpp>

#include "analysis/tree/log_facts.hpp"

using namespace ccdiag;

namespace {
EvidenceSet extract(const std::string& text, const std::string& host = "") {
  EvidenceSet set;
  extract_log_facts(text, "t.log", host, set);
  return set;
}
// The mechanism signals without the generic layer cues (tree_log_cues.cpp tests those).
std::vector<Finding> signals(const EvidenceSet& set) {
  std::vector<Finding> out;
  for (const auto& f : set.findings)
    if (f.id.rfind("log.cue.", 0) != 0) out.push_back(f);
  return out;
}
}  // namespace

TEST_CASE("log facts: NCCL init lines give version, env, bootstrap, IB devices and plugin state", "[tree][logfacts]") {
  const auto set = extract(
      "node1:2212:2212 [3] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ens1f0\n"
      "node1:2212:2212 [3] NCCL INFO Bootstrap : Using ens1f0:10.12.0.7<0>\n"
      "node1:2212:2212 [3] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation\n"
      "node1:2212:2212 [3] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
      "node1:2212:2212 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/RoCE ; OOB ens1f0:10.12.0.7<0>\n");
  REQUIRE(set.of_kind("log.nccl_env").size() == 1);
  CHECK(set.of_kind("log.nccl_env")[0]->data["value"] == "ens1f0");
  CHECK(set.of_kind("log.nccl_env")[0]->subject.host == "node1");
  CHECK(set.of_kind("log.nccl_env")[0]->subject.pid == 2212);
  CHECK(set.of_kind("log.nccl_env")[0]->subject.gpu == "3");
  REQUIRE(set.of_kind("log.bootstrap").size() == 1);
  CHECK(set.of_kind("log.bootstrap")[0]->data["ifname"] == "ens1f0");
  CHECK(set.of_kind("log.bootstrap")[0]->data["addr"] == "10.12.0.7");
  CHECK(set.of_kind("log.net_plugin")[0]->data["state"] == "none");
  CHECK(set.of_kind("log.nccl_version")[0]->data["version"] == "2.21.5");
  const auto& devs = set.of_kind("log.net_ib")[0]->data["devices"];
  REQUIRE(devs.size() == 2);
  CHECK(devs[1]["nic"] == "mlx5_3");
  CHECK(devs[1]["link"] == "RoCE");
  CHECK(set.findings.empty());  // init lines are facts, not problems
}

TEST_CASE("log facts: channel edges and peer-access reports", "[tree][logfacts]") {
  const auto set = extract("<hostA>:3728593:3730444 [6] INFO Ring 00 : 6[6] -> 10[2] via P2P/IPC\n"
                           "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
                           "h:1:2 [0] NCCL INFO Channel 01/0 : 1[1] -> 8[0] [send] via NET/IB/0/GDRDMA\n"
                           "Device=0 CANNOT Access Peer Device=2\n");
  const auto edges = set.of_kind("log.channel_edge");
  REQUIRE(edges.size() == 3);
  CHECK(edges[0]->data["from_rank"] == 6);
  CHECK(edges[0]->data["to_rank"] == 10);
  CHECK(edges[0]->data["to_dev"] == 2);
  CHECK(edges[0]->data["transport"] == "P2P/IPC");
  CHECK(edges[2]->data["transport"] == "NET/IB/0/GDRDMA");
  REQUIRE(set.of_kind("log.peer_access").size() == 1);
  CHECK(set.of_kind("log.peer_access")[0]->data["can"] == false);
}

TEST_CASE("log facts: mechanism signals carry supports and the right role", "[tree][logfacts]") {
  const auto set = extract(
      "[2026-04-22 21:34:20] pod:202016:202235 [0] misc/shmutils.cc:88 NCCL WARN Error: failed to extend "
      "/dev/shm/nccl-WU88OE to 9637892 bytes, error: No space left on device (28)\n"
      "pod:202016:202240 [1] misc/socket.cc:538 NCCL WARN socketProgress: Connection closed by remote peer pod<1>\n");
  const auto fs = signals(set);
  REQUIRE(fs.size() == 2);
  CHECK(fs[0].id == "log.shm_no_space");
  CHECK(fs[0].role == FindingRole::primary);
  REQUIRE(fs[0].supports.size() == 1);
  CHECK(fs[0].supports[0].cause == "container_shm_too_small");
  CHECK(fs[0].provenance[0].line == 1);
  CHECK(fs[1].id == "log.peer_gone");
  CHECK(fs[1].role == FindingRole::cascade);
  CHECK(fs[1].supports.empty());
}

TEST_CASE("log facts: IB completion status decides the cause; WR flush is a cascade", "[tree][logfacts]") {
  const auto set = extract(
      "n1:1:2 [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.8<1> with status=12 "
      "opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.7 remoteGids::ffff:10.0.0.8 hca mlx5_3\n"
      "n2:1:2 [3] NCCL WARN NET/IB : Got completion with error 5, opcode 0, len 0, vendor err 249\n");
  const auto fs = signals(set);
  REQUIRE(fs.size() == 2);
  CHECK(fs[0].id == "log.ib_completion_error");
  CHECK(fs[0].subject.nic == "mlx5_3");
  CHECK(fs[0].fields["peer"] == "10.0.0.8<1>");
  CHECK(fs[0].supports[0].cause == "ib_transport_retry_exceeded");
  CHECK(fs[1].id == "log.ib_completion_flushed");
  CHECK(fs[1].role == FindingRole::cascade);
}

TEST_CASE("log facts: watchdog fields, repeats collapse, torchrun root-cause block", "[tree][logfacts]") {
  const auto set = extract(
      "[rank3]:[E1130 03:02:11.482000 2212 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=4512, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600021 ms\n"
      "[rank3]: frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233\n"
      "[rank3]: frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(...) + 0x1d2\n"
      "Root Cause (first observed failure):\n"
      "  host      : node2\n"
      "  rank      : 9 (local_rank: 1)\n"
      "  exitcode  : -9 (pid: 48213)\n");
  REQUIRE(set.findings.size() == 2);
  CHECK(set.findings[0].id == "log.watchdog_timeout");
  CHECK(set.findings[0].subject.rank == 3);
  CHECK(set.findings[0].subject.seq == 4512);
  CHECK(set.findings[0].fields["timeout_ms"] == 600000);
  CHECK(set.findings[0].fields["repeats"] == 2);
  CHECK(set.findings[1].id == "log.rank_killed");
  CHECK(set.findings[1].subject.rank == 9);
  CHECK(set.findings[1].subject.host == "node2");
  CHECK(set.findings[1].supports[0].cause == "rank_process_died");
}

TEST_CASE("log facts: a launcher's negative exit code is the signal that killed the rank", "[tree][logfacts]") {
  auto supports = [](const Finding& f, const char* cause) {
    for (const auto& c : f.supports)
      if (c.cause == cause) return true;
    return false;
  };
  // torchrun's failure table: -7 is SIGBUS, a /dev/shm segment the tmpfs could not back.
  auto set = extract("Root Cause (first observed failure):\n  host      : node2\n  rank      : 1 (local_rank: 1)\n"
                     "  exitcode  : -7 (pid: 48213)\n");
  REQUIRE(set.findings.size() == 1);
  CHECK(set.findings[0].id == "log.rank_killed");
  CHECK(set.findings[0].fields["signal"] == "SIGBUS");
  CHECK(set.findings[0].summary.find("(SIGBUS)") != std::string::npos);
  CHECK(supports(set.findings[0], "container_shm_too_small"));
  // DeepSpeed's launcher says the same in its own words.
  set = extract("[2023-07-20 15:45:14,306] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', "
                "'main.py', '--local_rank=3'] exits with return code = -7\n");
  REQUIRE(set.findings.size() == 1);
  CHECK(set.findings[0].id == "log.rank_killed");
  CHECK(supports(set.findings[0], "container_shm_too_small"));
  // SIGKILL is no /dev/shm matter; exit 1 is an exit, not a signal.
  set = extract("[ERROR] [launch.py:321:sigkill_handler] ['python', 'main.py'] exits with return code = -9\n");
  REQUIRE(set.findings.size() == 1);
  CHECK(set.findings[0].fields["signal"] == "SIGKILL");
  CHECK_FALSE(supports(set.findings[0], "container_shm_too_small"));
  set = extract("[ERROR] [launch.py:321:sigkill_handler] ['python', 'main.py'] exits with return code = 1\n");
  REQUIRE(set.findings.size() == 1);
  CHECK(set.findings[0].id == "log.rank_exited");
}

TEST_CASE("log facts: user exceptions vote for user_code_bug, distributed ones do not", "[tree][logfacts]") {
  auto set = extract("[rank2]: KeyError: 'labels'\n");
  REQUIRE(set.findings.size() == 1);
  CHECK(set.findings[0].supports[0].cause == "user_code_bug");
  CHECK(set.findings[0].subject.rank == 2);
  set = extract("[rank0]: torch.distributed.DistBackendError: NCCL error in: x.cpp:1, unhandled system error\n");
  for (const auto& f : set.findings) CHECK(f.id != "log.python_exception");
}

TEST_CASE("log facts: garbage, binary and huge lines never crash", "[tree][logfacts]") {
  std::string junk(200000, 'A');
  junk += "\n\x01\x02\xff NCCL WARN Ring 00 : 99999999999999999999[1] -> 1[1] via P2P\n";
  junk += "NCCL version 2.\nDevice=x CAN Access Peer Device=\n  exitcode  : 99999999999999999999\n";
  junk += std::string("\0\0\0", 3) + "\r\n";
  EvidenceSet set;
  REQUIRE_NOTHROW(extract_log_facts(junk, "junk.log", "", set));
  REQUIRE_FALSE(set.of_kind("log.facts_summary").empty());
  CHECK(set.of_kind("log.facts_summary")[0]->data["lines"] == 6);
}

TEST_CASE("log facts: a pasted p2pBandwidthLatencyTest whose enabled P2P collapses points at the P2P path",
          "[tree][logfacts]") {
  const std::string head =
      "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n"
      "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n"
      "   D\\D     0      1      2 \n"
      "     0 673.20  13.15  13.15 \n"
      "     1  12.99 673.20  22.20 \n"
      "     2  13.00  21.98 673.78 \n";
  const auto collapsed = extract(head +
                                 "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n"
                                 "   D\\D     0      1      2 \n"
                                 "     0 673.49   2.60   1.58 \n"
                                 "     1   2.12 672.33   1.70 \n"
                                 "     2   2.12   1.60 673.78 \n");
  const auto fs = collapsed.findings_with("log.p2p_bandwidth_collapse");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0]->layer == Layer::hardware);
  CHECK(fs[0]->summary.find("1.91 GB/s with P2P enabled vs 13.15 GB/s") != std::string::npos);
  REQUIRE_FALSE(fs[0]->supports.empty());
  CHECK(fs[0]->supports[0].cause == "iommu_blocks_p2p");
  // Healthy P2P (enabled far faster than through the host) is no finding.
  const auto healthy = extract(head +
                               "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n"
                               "   D\\D     0      1      2 \n"
                               "     0 673.49  52.60  51.58 \n"
                               "     1  52.12 672.33  51.70 \n"
                               "     2  52.12  51.60 673.78 \n");
  CHECK(healthy.findings_with("log.p2p_bandwidth_collapse").empty());
  // One matrix alone cannot be compared.
  CHECK(extract(head).findings_with("log.p2p_bandwidth_collapse").empty());
}

TEST_CASE("log facts: systemctl status of a failed fabric manager", "[tree][logfacts]") {
  const auto set = extract(
      "$ sudo systemctl status nvidia-fabricmanager\n"
      "* nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
      "     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled; vendor preset: enabled)\n"
      "     Active: failed (Result: exit-code) since Mon 2024-07-01 14:43:57 UTC; 5s ago\n");
  const auto fs = set.findings_with("log.fabric_manager_failed");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0]->provenance[0].line == 4);
  CHECK(fs[0]->supports[0].cause == "fabric_manager_not_running");
  // Another unit that failed is not the fabric manager.
  const auto other = extract("* sshd.service - OpenBSD Secure Shell server\n"
                             "     Active: failed (Result: exit-code)\n");
  CHECK(other.findings_with("log.fabric_manager_failed").empty());
  // The journal's one-line form.
  CHECK(extract("systemd[1]: nvidia-fabricmanager.service: Failed with result 'exit-code'.\n")
            .findings_with("log.fabric_manager_failed")
            .size() == 1);
}

TEST_CASE("log facts: a pasted stack inside NCCL's launch path points at NCCL; a waiting or idle one does not",
          "[tree][logfacts]") {
  // gdb `thread apply all bt`: the main thread blocked in a launch NCCL issued.
  const auto gdb = extract(
      "Thread 1 (Thread 0x7f00aa000740 (LWP 4242)):\n"
      "#0  0x00007f00a1000c50 in ?? () from /lib/x86_64-linux-gnu/libcuda.so.1\n"
      "#1  0x00007f00a0e67f06 in cudaLaunchKernel () from /usr/lib/libcudart.so.12\n"
      "#2  0x00007f00b07d6cf9 in ncclStrongStreamLaunchKernel(ncclCudaGraph, ncclStrongStream*, void*) () from libnccl.so.2\n"
      "#3  0x00007f00b07a56c8 in ncclLaunchKernel(ncclComm*, ncclKernelPlan*) () from libnccl.so.2\n"
      "#4  0x00007f00b07c494d in ncclGroupEndInternal() () from libnccl.so.2\n"
      "#5  0x00007f00b0794f4c in c10d::ProcessGroupNCCL::allreduce(...) () from libtorch_cuda.so\n");
  const auto fs = gdb.findings_with("log.stack_in_nccl_launch");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0]->layer == Layer::nccl);
  CHECK(fs[0]->summary.find("ncclStrongStreamLaunchKernel <- ncclLaunchKernel <- ncclGroupEndInternal") !=
        std::string::npos);
  REQUIRE_FALSE(fs[0]->supports.empty());
  CHECK(fs[0]->supports[0].cause == "nccl_bug");
  CHECK(fs[0]->provenance[0].line == 2);
  // py-spy --native: the same, one frame per indented line.
  const auto pyspy = extract(
      "Thread 77 (active): \"MainThread\"\n"
      "    sched_yield (libc.so.6)\n"
      "    ncclLaunchKernelBefore_NoUncapturedCuda (enqueue.cc:1200)\n"
      "    doLaunches (group.cc:150)\n"
      "    ncclGroupEndInternal (group.cc:400)\n"
      "    all_reduce (torch/distributed/distributed_c10d.py:2500)\n");
  CHECK(pyspy.findings_with("log.stack_in_nccl_launch").size() == 1);
  // An idle proxy thread and a main thread waiting for its stream are where
  // every healthy or peer-blocked rank sits.
  const auto idle = extract(
      "Thread 78 (idle): \"NCCL Progress\"\n"
      "    pthread_cond_wait (libc.so.6)\n"
      "    ncclProxyProgress (proxy.cc:900)\n"
      "Thread 77 (active): \"MainThread\"\n"
      "    cudaStreamSynchronize (libcudart.so.12)\n"
      "    c10d::ProcessGroupNCCL::WorkNCCL::synchronize (ProcessGroupNCCL.cpp:700)\n");
  CHECK(idle.findings_with("log.stack_in_nccl_launch").empty());
  // A Python traceback is no stack of frames.
  CHECK(extract("Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n    ncclGroupEnd()\n")
            .findings_with("log.stack_in_nccl_launch")
            .empty());
}

TEST_CASE("pasted blocks: setpci reads of the ACS control register", "[tree][facts]") {
  // A loop over the PLX switch ports as posted (pytorch/pytorch#24081 shape): non-zero control words.
  const auto on = extract(
      "$ for plx in $(lspci | grep -i plx | awk '{print $1}'); do sudo setpci -s ${plx} f2a.w; done\n"
      "[sudo] password for <user>:\n"
      "0000\n"
      "001d\n"
      "001d\n"
      "0000\n");
  const auto fs = on.findings_with("log.setpci_acs_enabled");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0]->layer == Layer::hardware);
  CHECK(fs[0]->summary.find("2 of 4") != std::string::npos);
  CHECK(fs[0]->provenance[0].line == 4);
  REQUIRE_FALSE(fs[0]->supports.empty());
  CHECK(fs[0]->supports[0].cause == "pcie_acs_p2p_blocked");
  // The generic register name; every bridge reads 0000: ACS is off.
  CHECK(extract("# setpci -s 0000:17:00.0 ecap_acs+6.w\n0000\n0000\n")
            .findings_with("log.setpci_acs_enabled")
            .empty());
  // A write is someone turning ACS off, and values after the block ended are not register reads.
  CHECK(extract("sudo setpci -s 0000:17:00.0 ECAP_ACS+0x6.w=0000\n001d\n").findings_with("log.setpci_acs_enabled").empty());
  CHECK(extract("sudo setpci -s 17:00.0 ecap_acs+6.w\n0000\nstep 10 loss 2.0\n001d\n")
            .findings_with("log.setpci_acs_enabled")
            .empty());
}

TEST_CASE("log facts: pasted blocks and line-start patterns are read behind a shipper's or launcher's prefix",
          "[tree][logfacts]") {
  // py-spy --native frames (indented) behind kubectl's prefix.
  const std::string stack =
      "Thread 77 (active): \"MainThread\"\n"
      "    sched_yield (libc.so.6)\n"
      "    ncclLaunchKernelBefore_NoUncapturedCuda (enqueue.cc:1200)\n"
      "    doLaunches (group.cc:150)\n"
      "    ncclGroupEndInternal (group.cc:400)\n";
  for (const std::string prefix : {"", "[pod/trainer-0/pytorch] ", "> ", "trainer-1  | ", "logs/rank0.log:"}) {
    std::string text;
    for (size_t at = 0; at < stack.size();) {
      const size_t nl = stack.find('\n', at);
      text += prefix + stack.substr(at, nl - at + 1);
      at = nl + 1;
    }
    INFO(prefix);
    CHECK(extract(text).findings_with("log.stack_in_nccl_launch").size() == 1);
  }
  // setpci's ACS register values behind grep -r's path prefix.
  const auto acs = extract(
      "logs/n1.log:$ sudo setpci -s 03:00.0 ecap_acs+6.w\n"
      "logs/n1.log:001d\n");
  CHECK(acs.findings_with("log.setpci_acs_enabled").size() == 1);
  // An exception line behind a Markdown quote is still the traceback's end.
  const auto exc = extract("> Traceback (most recent call last):\n"
                           ">   File \"train.py\", line 3, in <module>\n"
                           ">     x = batch[\"labels\"]\n"
                           "> KeyError: 'labels'\n");
  CHECK(exc.findings_with("log.python_exception").size() == 1);
}

TEST_CASE("log facts: a bootstrap failure is a message, not a source path that contains 'bootstrap'",
          "[tree][logfacts]") {
  // NVSHMEM propagates status codes with the file that passed them on; the
  // directory and file names say nothing about reaching the rendezvous.
  const auto nvshmem = extract(
      "/ws/nvshmem/src/modules/bootstrap/uid/bootstrap_uid.cpp:90: non-zero status: -6 "
      "/ws/nvshmem/src/modules/bootstrap/uid/bootstrap_uid.cpp:496: non-zero status: -6 init failed\n");
  CHECK(nvshmem.findings_with("log.bootstrap_failed").empty());
  // NCCL's own bootstrap WARN (file name without a directory) and a message that says it are failures.
  CHECK(extract("host:1:2 [0] bootstrap.cc:72 NCCL WARN Bootstrap : no socket interface found; init failed\n")
            .findings_with("log.bootstrap_failed")
            .size() == 1);
  CHECK(extract("[E] bootstrap root /ws/x.cpp:10 connect timed out\n").findings_with("log.bootstrap_failed").size() ==
        1);
}

TEST_CASE("pasted blocks: nvidia-smi topo -m counts GPU pairs over NVLink and over PCIe", "[tree][facts]") {
  const auto pcie = extract(
      "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\t X \tPXB\tSYS\tSYS\t0-27,56-83\t0\n"
      "GPU1\tPXB\t X \tSYS\tSYS\t0-27,56-83\t0\n"
      "GPU2\tSYS\tSYS\t X \tPIX\t28-55,84-111\t1\n"
      "GPU3\tSYS\tSYS\tPIX\t X \t28-55,84-111\t1\n"
      "\n"
      "Legend:\n");
  auto fs = pcie.findings_with("log.gpu_topology");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0]->role == FindingRole::context);
  CHECK(fs[0]->fields["gpus"] == 4);
  CHECK(fs[0]->fields["nics"] == 0);
  CHECK(fs[0]->fields["pcie_pairs"] == 6);  // each pair once
  CHECK(fs[0]->fields["nvlink_pairs"] == 0);
  CHECK(fs[0]->provenance[0].line == 1);
  // NVLink pairs and NIC columns (spaces, as copied from a terminal).
  const auto mixed = extract(
      "        GPU0    GPU1    GPU2    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
      "GPU0     X      NV4     NODE    PIX     0-95    0               N/A\n"
      "GPU1    NV4      X      NODE    PIX     0-95    0               N/A\n"
      "GPU2    NODE    NODE     X      SYS     0-95    0               N/A\n"
      "NIC0    PIX     PIX     SYS      X\n");
  fs = mixed.findings_with("log.gpu_topology");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0]->fields["gpus"] == 3);
  CHECK(fs[0]->fields["nics"] == 1);
  CHECK(fs[0]->fields["nvlink_pairs"] == 1);
  CHECK(fs[0]->fields["pcie_pairs"] == 2);
  // A header alone, or rows cut short, count nothing they do not show.
  CHECK(extract("GPU0\tGPU1\tCPU Affinity\nGPU0\t X\n").findings_with("log.gpu_topology").size() == 1);
  CHECK(extract("GPU0 GPU1 CPU Affinity\n").findings_with("log.gpu_topology")[0]->fields["pcie_pairs"] == 0);
  CHECK(extract("GPU utilisation 0% CPU Affinity\n").findings_with("log.gpu_topology").empty());
}

TEST_CASE("log facts: a failed completion whose remote GID is this host's own is NIC-to-NIC inside the host",
          "[tree][logfacts]") {
  const std::string warn =
      "h:1:2 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<54862> with status=12 "
      "opcode=0 len=0 vendor err 129 (Recv) localGid fd00::3:ff22 remoteGids";
  // The remote GID is an address of a pasted `ip addr` of the same host.
  auto set = extract(warn + "fd00::3:ff20\n" + "28: net4: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 4200 qdisc mq\n"
                                               "    inet6 fd00::3:ff20/120 scope global \n");
  auto fs = set.findings_with("log.ib_peer_on_same_host");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0]->fields["remote_gid"] == "fd00::3:ff20");
  REQUIRE_FALSE(fs[0]->supports.empty());
  CHECK(fs[0]->supports[0].cause == "nic_pair_unreachable");
  // ... or another NIC's local GID in the same log; IPv4-mapped GIDs compare with `ip addr`'s IPv4.
  CHECK(extract(warn + "fd00::3:ff21\n" +
                "h:1:2 [4] NCCL WARN NET/IB : Got completion from peer x with status=12 opcode=0 len=0 vendor err 129 "
                "(Recv) localGid fd00::3:ff21 remoteGidsfd00::9:1\n")
            .findings_with("log.ib_peer_on_same_host")
            .size() == 1);
  CHECK(extract("h:1:2 [0] NCCL WARN NET/IB : Got completion from peer x with status=12 opcode=0 len=0 vendor err 129 "
                "(Recv) localGid ::ffff:10.1.0.5 remoteGids ::ffff:10.1.0.7\n    inet 10.1.0.7/24 brd 10.1.0.255\n")
            .findings_with("log.ib_peer_on_same_host")
            .size() == 1);
  // A remote GID of another host is no such evidence.
  CHECK(extract(warn + "fd00::9:1\n    inet6 fd00::3:ff20/120 scope global\n")
            .findings_with("log.ib_peer_on_same_host")
            .empty());
}

TEST_CASE("log facts: NCCL refusing graph capture is a build/driver version mismatch, also after 'Last error:'",
          "[tree][logfacts]") {
  for (const std::string line :
       {"h:1:1 [0] misc/strongstream.cc:53 NCCL WARN NCCL cannot be captured in a graph if either it wasn't built "
        "with CUDA runtime >= 11.3 or if the installed CUDA driver < R465.",
        "NCCL cannot be captured in a graph if either it wasn't built with CUDA runtime >= 11.3 or if the installed "
        "CUDA driver < R465."}) {
    const auto set = extract("Last error:\n" + line + "\n");
    const auto fs = set.findings_with("log.graph_capture_unsupported");
    REQUIRE(fs.size() == 1);
    CHECK(fs[0]->supports[0].cause == "driver_library_mismatch");
  }
}

TEST_CASE("log facts: the fabric manager refusing to start", "[tree][logfacts]") {
  for (const std::string line :
       {"Jul 20 16:15:36 edge-1:  Kernel module \"ib_umad\" has not been loaded, fabric manager cannot be started",
        "Jul 20 16:15:36 node systemd[1]: Failed to start NVIDIA fabric manager service."}) {
    const auto set = extract(line + "\n");
    const auto fs = set.findings_with("log.fabric_manager_not_started");
    REQUIRE(fs.size() == 1);
    CHECK(fs[0]->supports[0].cause == "fabric_manager_not_running");
  }
  CHECK(extract("Starting NVIDIA fabric manager service...\n").findings_with("log.fabric_manager_not_started").empty());
}

TEST_CASE("log facts: CUDA's and HIP's capture errors are stream-capture misuse", "[tree][logfacts]") {
  for (const std::string line : {"HIP error: operation not permitted on an event last recorded in a capturing stream",
                                 "(hipErrorCapturedEvent)", "CUDA error: operation not permitted when stream is capturing"}) {
    const auto set = extract(line + "\n");
    const auto fs = set.findings_with("log.stream_capture");
    REQUIRE(fs.size() == 1);
    CHECK(fs[0]->supports[0].cause == "cuda_graph_or_stream_misuse");
  }
}

TEST_CASE("log facts: a channel's transport keeps a plugin name with spaces and drops Ray's repeat note",
          "[tree][logfacts]") {
  const auto set = extract(
      "h:4871:7029 [2] NCCL INFO Channel 00/1 : 1[2] -> 0[2] [send] via NET/AWS Libfabric/1/GDRDMA/Shared\n"
      "(RayWorkerWrapper pid=291) h:291:3517 [1] NCCL INFO Channel 01/0 : 0[1] -> 1[2] via P2P/IPC [repeated 2x across "
      "cluster]\n");
  const auto edges = set.of_kind("log.channel_edge");
  REQUIRE(edges.size() == 2);
  CHECK(edges[0]->data["transport"] == "NET/AWS Libfabric/1/GDRDMA/Shared");
  CHECK(edges[0]->data["direction"] == "send");
  CHECK(edges[1]->data["transport"] == "P2P/IPC");
}

TEST_CASE("log facts: one channel edge fact per peer and transport, counting its channels", "[tree][logfacts]") {
  std::string log;
  // 32 channels of the same two edges from one process, then one from another process.
  for (int c = 0; c < 32; ++c) {
    const std::string ch = (c < 10 ? "0" : "") + std::to_string(c);
    log += "h:10:20 [0] NCCL INFO Channel " + ch + "/32 : 0[0] -> 1[1] via P2P/IPC/read\n";
    log += "h:10:20 [0] NCCL INFO Channel " + ch + "/32 : 0[0] -> 8[0] [send] via NET/IB/" + std::to_string(c % 2) +
           "/GDRDMA\n";
  }
  log += "h:11:21 [1] NCCL INFO Channel 00/32 : 1[1] -> 2[2] via P2P/IPC/read\n";
  const auto set = extract(log);
  const auto edges = set.of_kind("log.channel_edge");
  REQUIRE(edges.size() == 4);  // P2P, NET/IB/0, NET/IB/1 of pid 10; P2P of pid 11
  CHECK(edges[0]->data["transport"] == "P2P/IPC/read");
  CHECK(edges[0]->data["channels"] == 32);
  CHECK(edges[0]->provenance.line == 1);  // the first line that showed it
  CHECK(edges[1]->data["transport"] == "NET/IB/0/GDRDMA");
  CHECK(edges[1]->data["channels"] == 16);
  CHECK(edges[2]->data["channels"] == 16);
  CHECK(edges[3]->subject.pid == 11);
  CHECK(edges[3]->data["channels"] == 1);
}
