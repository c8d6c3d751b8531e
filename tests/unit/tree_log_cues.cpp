// Generic log cues and honest verdicts: NCCL source files, error names and
// pasted blocks place an unseen wording in its layer; failure lines are never
// taken for health; silence is not health. Lines are as NCCL, CUDA, PyTorch,
// nvidia-smi and ibstat print them (from public issue threads).
#include <catch2/catch.hpp>

#include "analysis/tree/decision_tree.hpp"
#include "analysis/tree/log_cues.hpp"
#include "analysis/tree/log_facts.hpp"
#include "collectors/logs/analyzer.hpp"
#include "ccdiag/line_prefix.hpp"
#include "tree_helpers.hpp"

using namespace ccdiag;

namespace {

bool has_cue(const std::vector<LogCue>& cues, const std::string& id, Layer layer) {
  for (const auto& c : cues)
    if (c.id == id && c.layer == layer) return true;
  return false;
}

Report diagnose_text(const std::string& text) {
  EvidenceSet set;
  extract_log_facts(text, "t.log", "", set);
  return decide(set);
}

}  // namespace

TEST_CASE("log cues: an NCCL source file places a WARN or breadcrumb in its subsystem's layer", "[tree][cues]") {
  CHECK(has_cue(line_cues("h:1:2 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : something new"), "nccl_src.net_ib",
                Layer::transport));
  CHECK(has_cue(line_cues("h:1:2 [0] NCCL INFO transport/net_ib/connect.cc:412 -> 6"), "nccl_src.net_ib",
                Layer::transport));
  CHECK(has_cue(line_cues("h:1:2 [3] graph/xml.cc:657 NCCL WARN Could not do something"), "nccl_src.graph",
                Layer::nccl));
  CHECK(has_cue(line_cues("h:1:2 [0] misc/shmutils.cc:88 NCCL WARN Error: failed"), "nccl_src.shm",
                Layer::system_config));
  CHECK(has_cue(line_cues("h:1:2 [0] transport/p2p.cc:272 NCCL WARN Cuda failure 'invalid argument'"),
                "nccl_src.p2p", Layer::hardware));
  CHECK(has_cue(line_cues("h:1:2 [0] misc/cudawrap.cc:36 NCCL WARN cuInit failed"), "nccl_src.cuda_driver",
                Layer::system_config));
  // NCCL <= 2.8: .cu files, and WARN without the word NCCL.
  CHECK(has_cue(line_cues("h:17283:17549 [3] include/socket.h:371 WARN Connection closed by remote peer"),
                "nccl_src.socket", Layer::transport));
  CHECK(has_cue(line_cues("h:17281:17552 [1] INFO bootstrap.cu:45 -> 2 [Net]"), "nccl_src.bootstrap",
                Layer::transport));
  // A path cut by Markdown emphasis still names the file.
  CHECK(nccl_source_file("_ibvwrap.cc: NCCL WARN Call to ibv_modify_qp failed") == std::string("ibvwrap.cc"));
  // nccl-tests' own file is not NCCL's.
  for (const auto& c : line_cues("h: Test NCCL failure common.cu:959 'internal error'"))
    CHECK(c.id.rfind("nccl_src.", 0) != 0);
  // Successful breadcrumbs and plain INFO lines say nothing.
  CHECK_FALSE(nccl_source_file("h:1:2 [0] NCCL INFO Channel 00/02 : 0 1"));
}

TEST_CASE("log cues: error names, exception classes and pasted blocks", "[tree][cues]") {
  CHECK(has_cue(line_cues("Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error"),
                "gpu_handle_lost", Layer::hardware));
  CHECK(has_cue(line_cues("register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2)"),
                "ofi_warn", Layer::nccl));
  CHECK(has_cue(line_cues("torch.distributed.DistNetworkError: Connection reset by peer"), "dist_network_error",
                Layer::transport));
  CHECK(has_cue(line_cues("                State: Down"), "ibstat_port_down", Layer::transport));
  CHECK(has_cue(line_cues("max locked memory       (kbytes, -l) 64"), "ulimit_memlock", Layer::system_config));
  CHECK(line_cues("max locked memory       (kbytes, -l) unlimited").empty());
  CHECK(has_cue(line_cues("h:1:2 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device"),
                "shm_segment_no_space", Layer::system_config));
  CHECK(has_cue(line_cues("shm              64M     0   64M   0% /dev/shm"), "df_dev_shm_small", Layer::system_config));
  CHECK_FALSE(has_cue(line_cues("tmpfs            252G     0  252G   0% /dev/shm"), "df_dev_shm_small",
                      Layer::system_config));
  // The fabric manager's own log refusing an NVLS multicast team (fabricmanager.log, as posted publicly).
  CHECK(has_cue(line_cues("[Oct 31 2023 21:11:20] [ERROR] [tid 527118] failed to find the GPU handle "
                          "12766911663723876521 in the multicast team request setup 4285537028137661651."),
                "fabric_manager_multicast_team", Layer::nccl));
  CHECK_FALSE(has_cue(line_cues("[Oct 31 2023 21:11:20] [INFO] [tid 526859] Received an inband message: "
                                "Team setup request: Allocation Size:60000000 multicast team"),
                      "fabric_manager_multicast_team", Layer::nccl));
  CHECK(has_cue(line_cues("RuntimeError: CUDA error: an illegal memory access was encountered"),
                "cuda_illegal_address", Layer::framework));
  // Ray's object-store warning gives /dev/shm's size in bytes: under 1 GiB is a container default.
  const char* ray = "2023-11-18 03:39:16,283 WARNING services.py:1996 -- WARNING: The object store is using /tmp "
                    "instead of /dev/shm because /dev/shm has only 67108864 bytes available. This will harm performance!";
  CHECK(has_cue(line_cues(ray), "shm_size_reported_small", Layer::system_config));
  CHECK_FALSE(has_cue(line_cues("WARNING: The object store is using /tmp instead of /dev/shm because /dev/shm has only "
                                "68719476736 bytes available."),
                      "shm_size_reported_small", Layer::system_config));
  CHECK_FALSE(has_cue(line_cues("/dev/shm has only 99999999999999999999999999 bytes available"),
                      "shm_size_reported_small", Layer::system_config));
  CHECK(has_cue(line_cues("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient "
                          "shared memory (shm)."),
                "dataloader_shm_insufficient", Layer::system_config));
  // Gloo's TCP device: GLOO_SOCKET_IFNAME names an interface with no address.
  CHECK(has_cue(line_cues("RuntimeError: [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
                          "device.cc:84] ifa != nullptr. Unable to find address for: nosuch0"),
                "gloo_iface_missing", Layer::system_config));
  // PyTorch's TORCH_INTERNAL_ASSERT (torch/csrc/cuda/nccl.cpp, as posted publicly).
  CHECK(has_cue(line_cues("RuntimeError: false INTERNAL ASSERT FAILED at \"/torch/csrc/cuda/nccl.cpp\":228, please report "
                          "a bug to PyTorch. NCCL COMM NONBLOCKING USED WITH UNSUPPORTED NCCL VERSION."),
                "torch_internal_assert", Layer::framework));
  CHECK_FALSE(has_cue(line_cues("AssertionError: internal state check failed"), "torch_internal_assert",
                      Layer::framework));
  CHECK_FALSE(has_cue(line_cues("RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "
                                "\"../aten/src/ATen/cuda/CUDAContext.cpp\":50, please report a bug to PyTorch. "
                                "device=4, num_gpus=4"),
                      "torch_internal_assert", Layer::framework));
  // backend="nccl" where no GPU is visible (torch 2.x's message).
  CHECK(has_cue(line_cues("RuntimeError: nccl2 requires at least one CUDA device"), "cuda_no_device",
                Layer::system_config));
}

TEST_CASE("log cues: failure markers", "[tree][cues]") {
  CHECK(is_failure_marker("h:1:2 [0] NCCL WARN anything"));
  CHECK(is_failure_marker("Traceback (most recent call last):"));
  CHECK(is_failure_marker("RuntimeError: something broke"));
  CHECK(is_failure_marker("h:1:2 [0] NCCL INFO transport/net.cc:1298 -> 6"));
  CHECK(is_failure_marker("  exitcode  : 1 (pid: 2345)"));
  CHECK_FALSE(is_failure_marker("h:1:2 [0] NCCL INFO NCCL_IB_TIMEOUT set by environment to 22"));
  CHECK_FALSE(is_failure_marker("h:1:2 [0] NCCL INFO Channel 00/02 : 0 1"));
  // Channel, ring and tree set-up lines hold " -> " too; only "<file>:<line> -> <non-zero>" is a breadcrumb.
  CHECK_FALSE(is_failure_marker("h:1:2 [0] NCCL INFO Channel 01 : 0[100000] -> 1[200000] via direct shared memory"));
  CHECK_FALSE(is_failure_marker("h:1:2 [0] NCCL INFO Channel 00/0 : 3[3] -> 4[4] [receive] via NET/IB/2/GDRDMA"));
  CHECK_FALSE(is_failure_marker("h:1:2 [0] NCCL INFO Ring 00 : 0 -> 1 -> 0"));
  CHECK_FALSE(is_failure_marker("h:1:2 [0] NCCL INFO Tree 0 : -1 -> 0 -> 1/-1/-1"));
  CHECK_FALSE(is_failure_marker("h:1:2 [0] NCCL INFO transport/net.cc:1298 -> 0"));
  CHECK(is_failure_marker("h:1:2 [0] NCCL INFO include/socket.h:403 -> 2"));
  CHECK(is_failure_marker("h:1:2 [0] NCCL INFO enqueue.cu:1568 -> 1 [Async thread]"));
  CHECK_FALSE(is_failure_marker("step 100 loss 1.234"));
  // Names and settings that contain a failure word report nothing (a torchrun start-up banner).
  CHECK_FALSE(is_failure_marker("NCCL_ASYNC_ERROR_HANDLING: 1"));
  CHECK_FALSE(is_failure_marker("TIMEOUT(ms): 5000"));
  CHECK_FALSE(is_failure_marker("$ python -m torch.distributed.run --nproc_per_node=2 test_nccl_timeout.py"));
  CHECK_FALSE(is_failure_marker("I1028 12:13:38.405081 632355 ProcessGroupNCCL.cpp:843] [Rank 0] NCCL watchdog thread started!"));
  CHECK(is_failure_marker("[E ProcessGroupNCCL.cpp:737] [Rank 0] Watchdog caught collective operation timeout"));
  CHECK(is_failure_marker("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970"));
  CHECK(is_failure_marker("socket timeout after 30s"));
  CHECK(is_failure_marker("Timeout: waited 1800 s for the store"));
}

TEST_CASE("line prefixes: grep, compose, kubectl, mpirun, Ray, logging, Markdown quotes", "[logs][prefix]") {
  using logs::parse_line_prefix;
  auto p = parse_line_prefix("logs/rank3.log:128:node1:2212:2213 [3] NCCL WARN NET/IB : bad");
  CHECK(p.host == "node1");
  CHECK(p.pid == 2212);
  p = parse_line_prefix("train.log:node1:2212:2213 [3] NCCL INFO x");
  CHECK(p.host == "node1");
  // A source location is part of the message, not a grep prefix.
  p = parse_line_prefix("transport/net_ib.cc:1234 NCCL WARN NET/IB : bad");
  CHECK(p.body == "transport/net_ib.cc:1234 NCCL WARN NET/IB : bad");
  p = parse_line_prefix("trainer-1  | node2:77:78 [0] NCCL WARN x");
  CHECK(p.host == "node2");
  p = parse_line_prefix("[pod/train-0/pytorch] node3:5:6 [1] NCCL INFO y");
  CHECK(p.host == "node3");
  p = parse_line_prefix("[1,3]<stderr>:node4:9:9 [0] NCCL WARN z");
  CHECK(p.rank == 3);
  CHECK(p.host == "node4");
  p = parse_line_prefix("(RayWorkerVllm pid=4028887) ERROR 03-28 21:38:23 ray_utils.py:44] ncclUnhandledCudaError: x");
  CHECK(p.body == "ncclUnhandledCudaError: x");
  p = parse_line_prefix(">     node5:1:2 [0] NCCL WARN quoted");
  CHECK(p.host == "node5");
  // grep -r over a paste whose line is a number: the path goes, the value stays.
  CHECK(parse_line_prefix("logs/node1/rank3.log:001d").body == "001d");
  CHECK(parse_line_prefix("logs/node1/rank3.log:0000").body == "0000");
  CHECK(parse_line_prefix("logs/rank3.log:12:0000").body == "0000");  // grep -n
}

TEST_CASE("verdicts: logs without a failure are not health", "[tree][verdict]") {
  const Report r = diagnose_text("node1:1:2 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
                                 "node1:1:2 [0] NCCL INFO Channel 00/02 : 0 1\n");
  CHECK(r.verdict.root_cause == kInsufficientEvidence);
  CHECK(r.verdict.confidence <= 0.3);
  CHECK_FALSE(r.next_steps.empty());
}

TEST_CASE("verdicts: failure lines no rule explains are quoted, never health", "[tree][verdict]") {
  const Report r = diagnose_text("step 10 loss 2.1\nsomething entirely new went wrong: frobnication failed\n");
  CHECK(r.verdict.root_cause == kInsufficientEvidence);
  CHECK(r.verdict.confidence <= 0.3);
  bool quoted = false;
  for (const auto& f : r.findings)
    if (f.id == "log.unrecognized_failure") quoted = f.summary.find("frobnication failed") != std::string::npos;
  CHECK(quoted);
}

TEST_CASE("verdicts: a failure line a finding already quotes is not called unexplained", "[tree][verdict]") {
  // Two unseen failures: no cause to name, both lines quoted. Once a
  // finding reads the first (as a site signature would), only the other is.
  const std::string text =
      "worker 3: fatal error: the flux capacitor broke\n"
      "something entirely new went wrong: frobnication failed\n";
  auto unexplained = [](const Report& r) {
    std::vector<std::string> out;
    for (const auto& f : r.findings)
      if (f.id == "log.unrecognized_failure") out.push_back(f.summary);
    return out;
  };
  const auto plain = unexplained(diagnose_text(text));
  REQUIRE(plain.size() == 1);
  CHECK(plain[0].rfind("2 failure line(s)", 0) == 0);
  CHECK(plain[0].find("flux capacitor") != std::string::npos);

  EvidenceSet set;
  extract_log_facts(text, "t.log", "", set);
  Finding reader;
  reader.id = "test.reads_line_1";
  reader.layer = Layer::transport;
  reader.severity = Severity::warning;
  reader.role = FindingRole::symptom;
  reader.summary = "a broken flux capacitor";
  reader.provenance.push_back(Provenance{"t.log", 1, "worker 3: fatal error: the flux capacitor broke"});
  set.findings.push_back(reader);
  const Report r = decide(set);
  CHECK(r.verdict.root_cause == kInsufficientEvidence);
  const auto rest = unexplained(r);
  REQUIRE(rest.size() == 1);
  CHECK(rest[0].rfind("1 failure line(s)", 0) == 0);
  CHECK(rest[0].find("frobnication failed") != std::string::npos);
  CHECK(rest[0].find("flux capacitor") == std::string::npos);
}

TEST_CASE("verdicts: an unseen NCCL wording still lands in its layer", "[tree][verdict]") {
  const Report r = diagnose_text("node1:1:2 [0] transport/net_ib.cc:2000 NCCL WARN NET/IB : a wording never seen\n"
                                 "node1:1:2 [0] NCCL INFO transport/net_ib.cc:2100 -> 6\n");
  CHECK(r.verdict.root_cause == kInsufficientEvidence);
  REQUIRE(r.verdict.layer);
  CHECK(*r.verdict.layer == Layer::transport);
}

TEST_CASE("verdicts: a probe that checked a layer can show health", "[tree][verdict]") {
  EvidenceSet set;
  set.evidence.push_back(tree_test::ev("host.dev_shm", "n1", {{"size_bytes", 17179869184LL}}));
  CHECK(decide(set).verdict.root_cause == kNoProblemFound);
}

TEST_CASE("verdicts: a symptom-level cause yields to a supported cause and stays below 0.7", "[tree][verdict]") {
  using tree_test::finding;
  EvidenceSet set;
  set.findings.push_back(finding("a", Layer::transport, FindingRole::primary, {{"ib_transport_retry_exceeded", 400}}));
  Report r = decide(set);
  // Nothing deeper supported: the symptom stays the mechanism, a cause behind it the leading candidate.
  CHECK(r.verdict.mechanism == "ib_transport_retry_exceeded");
  CHECK(r.verdict.confidence < 0.7);
  // Retry exceeded as the catalogue weighs it, and a GID-index mechanism beside it.
  set.findings.clear();
  set.findings.push_back(finding("a", Layer::transport, FindingRole::primary, {{"ib_transport_retry_exceeded", 30}}));
  set.findings.push_back(finding("b", Layer::transport, FindingRole::primary, {{"roce_gid_index_mismatch", 40}}));
  r = decide(set);
  CHECK(r.verdict.root_cause == "roce_gid_index_mismatch");
  CHECK(r.verdict.confidence <= 0.6);
}

TEST_CASE("analyser: a tqdm redraw before an NCCL line leaves the NCCL prefix readable", "[logs][prefix]") {
  auto a = logs::LogAnalyzer::create(logs::builtin_signatures());
  REQUIRE(a);
  (*a)->add_text("Map:  50%|#####     | 500/1000 [00:01<00:01]\rnode7:4242:4243 [2] NCCL WARN NET/IB : Got completion "
                 "from peer 10.0.0.8<1> with status=12 opcode=0 len=0 vendor err 129 (Recv) hca mlx5_3\n",
                 "t.log", "");
  const auto out = (*a)->finish();
  bool seen = false;
  for (const auto& f : out.findings)
    if (f.id == "nccl.ib.completion_error.retry_exceeded") seen = f.subject.host == "node7" && f.subject.pid == 4242;
  CHECK(seen);
}

TEST_CASE("log cues: what a CUDA error inside NCCL means decides its layer", "[tree][cues]") {
  // A rejected argument is software (library / driver combination, NCCL defect), not the GPU.
  auto cues = line_cues("node1:1:2 [0] enqueue.cc:336 NCCL WARN Cuda failure 'invalid argument'");
  REQUIRE(has_cue(cues, "cuda_invalid_value", Layer::nccl));
  CHECK_FALSE(has_cue(cues, "nccl_invalid_usage", Layer::framework));  // not ncclInvalidArgument
  // In NVLS set-up it is the multicast object the fabric would not create.
  cues = line_cues("node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'");
  CHECK(has_cue(cues, "nvls_cuda_failure", Layer::system_config));
  CHECK_FALSE(has_cue(cues, "cuda_invalid_value", Layer::nccl));
  CHECK(has_cue(line_cues("enqueue.cc:336 NCCL WARN Cuda failure 'invalid resource handle'"), "cuda_invalid_handle",
                Layer::framework));
  CHECK(has_cue(line_cues("ncclInternalError: Internal check failed. Last error: Failed to find reverse path from "
                          "remNode 0/5f000 nlinks 4 to node 0/cb000"),
                "topology_search_failed", Layer::nccl));
  CHECK(has_cue(line_cues("NVIDIA GPU driver interface version 550.90.07 don't match with driver version 550.54.15"),
                "fabric_manager_version", Layer::system_config));
}

TEST_CASE("verdicts: an NVLS multicast failure names the fabric as the leading candidate", "[tree][verdict]") {
  const Report r = diagnose_text("node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'\n"
                                 "node23:12098:12141 [2] NCCL INFO transport/nvls.cc:394 -> 1\n"
                                 "node23:12098:12141 [2] NCCL INFO init.cc:1196 -> 1\n");
  CHECK(r.verdict.root_cause == "fabric_manager_state");
  CHECK(r.verdict.basis == "leading_candidate");
  CHECK(r.verdict.confidence <= 0.3);
}

TEST_CASE("verdicts: network channels without GDRDMA point at GPUDirect RDMA; with it, nothing", "[tree][verdict]") {
  const std::string no_gdr = "h:1:2 [5] NCCL INFO Channel 03/0 : 5[5] -> 12[4] [send] via NET/IB/3\n"
                             "h:1:3 [4] NCCL INFO Channel 03/0 : 13[5] -> 4[4] [receive] via NET/IB/3\n"
                             "h:1:4 [7] NCCL INFO Channel 00/0 : 7[7] -> 6[6] via P2P/direct pointer/read\n";
  Report r = diagnose_text(no_gdr);
  CHECK(r.verdict.root_cause == "gpudirect_rdma_module_missing");
  CHECK(r.verdict.confidence <= 0.3);
  bool derived = false;
  for (const auto& f : r.findings) derived |= f.id == "tree.net_without_gdr";
  CHECK(derived);
  r = diagnose_text(no_gdr + "h:1:5 [1] NCCL INFO Channel 01/0 : 1[1] -> 8[0] [send] via NET/IB/0/GDRDMA\n");
  CHECK(r.verdict.root_cause != "gpudirect_rdma_module_missing");
  // Set on purpose by the operator: not a missing module.
  r = diagnose_text("h:1:2 [5] NCCL INFO NCCL_NET_GDR_LEVEL set by environment to LOC\n" + no_gdr);
  CHECK(r.verdict.root_cause != "gpudirect_rdma_module_missing");
  // Socket networks never use GDR.
  r = diagnose_text("h:1:2 [5] NCCL INFO Channel 03/0 : 5[5] -> 12[4] [send] via NET/Socket/0\n"
                    "h:1:3 [4] NCCL INFO Channel 03/0 : 13[5] -> 4[4] [receive] via NET/Socket/0\n");
  CHECK(r.verdict.root_cause != "gpudirect_rdma_module_missing");
}

TEST_CASE("log cues: a loopback peer is the interface for NCCL, the host name for Gloo / c10d", "[tree][cues]") {
  const auto nccl = line_cues("socketStartConnect: Connect to 127.0.0.1<45069> failed : Software caused connection abort");
  CHECK(has_cue(nccl, "loopback_peer_nccl", Layer::system_config));
  CHECK_FALSE(has_cue(nccl, "loopback_peer", Layer::system_config));
  const auto gloo = line_cues("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect "
                              "[127.0.1.1]:12345: Connection refused");
  CHECK(has_cue(gloo, "loopback_peer", Layer::system_config));
  CHECK_FALSE(has_cue(gloo, "loopback_peer_nccl", Layer::system_config));
}

TEST_CASE("log cues: P2P unsupported is the driver's answer; an illegal multicast state is the fabric", "[tree][cues]") {
  for (const auto& c : line_cues("Failed: Cuda error custom_all_reduce.cuh:307 'peer access is not supported between "
                                 "these two devices'"))
    if (c.id == "cuda_peer_unsupported") {
      REQUIRE_FALSE(c.supports.empty());
      CHECK(c.supports[0].cause == "gpu_driver_p2p_bug");
    }
  CHECK(has_cue(line_cues("Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401 'the "
                          "operation cannot be performed in the present state'."),
                "cuda_illegal_state", Layer::system_config));
  // The same CUDA error outside multicast set-up is no fabric evidence.
  CHECK_FALSE(has_cue(line_cues("CUDA error: the operation cannot be performed in the present state"),
                      "cuda_illegal_state", Layer::system_config));
}

TEST_CASE("log cues: pasted ibdev2netdev and nvidia-smi nvlink -s states", "[tree][cues]") {
  CHECK(has_cue(line_cues("mlx5_2 port 1 ==> ib2 (Down)"), "ibdev2netdev_down", Layer::transport));
  CHECK_FALSE(has_cue(line_cues("mlx5_0 port 1 ==> ib0 (Up)"), "ibdev2netdev_down", Layer::transport));
  CHECK(has_cue(line_cues("\t Link 3: <inactive>"), "nvlink_inactive", Layer::hardware));
  CHECK_FALSE(has_cue(line_cues("\t Link 3: 26.562 GB/s"), "nvlink_inactive", Layer::hardware));
  // nvidia-smi nvlink -e: non-zero recovery / CRC / replay counters; zero is health.
  CHECK(has_cue(line_cues("\t Link 1: Recovery Errors: 17"), "nvlink_error_counters", Layer::hardware));
  CHECK(has_cue(line_cues("\t Link 5: CRC Errors: 2311"), "nvlink_error_counters", Layer::hardware));
  CHECK(has_cue(line_cues("\t Link 0: Replay Errors: 3"), "nvlink_error_counters", Layer::hardware));
  CHECK_FALSE(has_cue(line_cues("\t Link 0: Replay Errors: 0"), "nvlink_error_counters", Layer::hardware));
  CHECK_FALSE(has_cue(line_cues("\t Link 0: CRC Errors: 0"), "nvlink_error_counters", Layer::hardware));
  CHECK_FALSE(has_cue(line_cues("Link down: Tx Errors: 4"), "nvlink_error_counters", Layer::hardware));
}

TEST_CASE("verdicts: watchdog timeouts at one SeqNum with different sizes are mismatched collectives",
          "[tree][verdict]") {
  // Two ranks of one job (ms-swift #10183): the same broadcast, 64 elements
  // on one rank and 24,084,544 on the other (a buffer one rank had grown).
  const std::string wd =
      "[rank3]:[E918 19:29:24.436955737 ProcessGroupNCCL.cpp:689] [Rank 3] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=7219, OpType=BROADCAST, NumelIn=64, NumelOut=64, Timeout(ms)=3000000) ran for "
      "3000097 milliseconds before timing out.\n"
      "[rank3]:[E918 19:29:24.440481846 ProcessGroupNCCL.cpp:2303] [PG ID 0 PG GUID 0(default_pg) Rank 3]  failure "
      "detected by watchdog at work sequence id: 7219 PG status: last enqueued work: 7220, last completed work: 7218\n";
  const std::string other_size =
      "[rank2]:[E918 19:29:25.950601628 ProcessGroupNCCL.cpp:689] [Rank 2] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=7219, OpType=BROADCAST, NumelIn=24084544, NumelOut=24084544, Timeout(ms)=3000000) ran "
      "for 3000074 milliseconds before timing out.\n";
  const std::string same_size =
      "[rank2]:[E918 19:29:25.950601628 ProcessGroupNCCL.cpp:689] [Rank 2] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=7219, OpType=BROADCAST, NumelIn=64, NumelOut=64, Timeout(ms)=3000000) ran "
      "for 3000074 milliseconds before timing out.\n";
  CHECK(diagnose_text(wd + other_size).verdict.root_cause == "mismatched_collectives");
  CHECK(diagnose_text(wd + same_size).verdict.root_cause != "mismatched_collectives");
  // All-to-all sizes legitimately differ per rank.
  std::string a2a = wd + other_size;
  for (size_t p; (p = a2a.find("BROADCAST")) != std::string::npos;) a2a.replace(p, 9, "ALLTOALL_BASE");
  CHECK(diagnose_text(a2a).verdict.root_cause != "mismatched_collectives");
}

TEST_CASE("log cues: rank-0-first barriers, service-mesh sidecars, NCCL allocation failures", "[tree][cues]") {
  CHECK(has_cue(line_cues("    with training_args.main_process_first(desc=\"dataset map tokenization\"):"),
                "main_process_first_barrier", Layer::framework));
  CHECK(has_cue(line_cues("    with torch_distributed_zero_first(LOCAL_RANK):"), "main_process_first_barrier",
                Layer::framework));
  CHECK(has_cue(line_cues("2022-07-19T18:01:59.173796Z\tdebug\tenvoy connection\t[C72] remote early close"),
                "service_mesh_sidecar", Layer::system_config));
  // envoy named without a proxied connection is not enough.
  CHECK_FALSE(has_cue(line_cues("pip install envoy-data-plane"), "service_mesh_sidecar", Layer::system_config));
  const Report r = diagnose_text(
      "[rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
      "NCCLUtils.hpp:268, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
      "[rank0]: ncclUnhandledCudaError: Call to CUDA function failed.\n"
      "[rank0]: Last error:\n"
      "[rank0]: Failed to CUDA calloc async 136 bytes\n");
  CHECK(r.verdict.root_cause == "gpu_memory_exhausted");
}

TEST_CASE("verdicts: a QP that cannot reach its peer on InfiniBand with several HCAs is an unreachable NIC pair",
          "[tree][verdict]") {
  const std::string using3 =
      "<host>:73:73 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB ; OOB eth0:<ip><0>\n";
  const std::string err12 =
      "<host>:91:123 [0] transport/net_ib.cc:881 NCCL WARN NET/IB : Got completion from peer <ip><49577> with error "
      "12, opcode 1, len 0, vendor err 129\n";
  CHECK(diagnose_text(using3 + err12).verdict.root_cause == "nic_pair_unreachable");
  // On RoCE the same failure is the GID index.
  std::string roce = using3;
  for (size_t p; (p = roce.find("/IB ")) != std::string::npos || (p = roce.find("/IB\n")) != std::string::npos;)
    roce.replace(p, 3, "/RoCE");
  CHECK(diagnose_text(roce + err12).verdict.root_cause == "roce_gid_index_mismatch");
}

TEST_CASE("log cues: a host-local or link-local interface in NCCL's list; store wait timeouts", "[tree][cues]") {
  CHECK(has_cue(line_cues("<host>:14605:14673 [0] NCCL INFO NET/Socket : Using [0]ens5:<ip><0> "
                          "[1]veth75fa783:fe80::14ad:64ff:fe64:b31e%veth75fa783<0>"),
                "socket_iface_not_routable", Layer::system_config));
  // One interface, or several routable ones, is no evidence.
  CHECK_FALSE(has_cue(line_cues("<host>:1:1 [0] NCCL INFO NET/Socket : Using [0]ens5:<ip><0>"),
                      "socket_iface_not_routable", Layer::system_config));
  CHECK_FALSE(has_cue(line_cues("<host>:1:1 [0] NCCL INFO NET/Socket : Using [0]ens5:<ip><0> [1]ens6:<ip><0>"),
                      "socket_iface_not_routable", Layer::system_config));
  CHECK(has_cue(line_cues("  what():  [horovod/common/gloo/http_store.cc:53] [horovod/common/gloo/http_store.cc:53] "
                          "Wait timeout for key(s): 0"),
                "store_wait_timeout", Layer::framework));
}

namespace {

bool cue_supports(const std::vector<LogCue>& cues, const std::string& id, const std::string& cause) {
  for (const auto& c : cues)
    if (c.id == id)
      for (const auto& s : c.supports)
        if (s.cause == cause && s.weight > 1) return true;
  return false;
}

}  // namespace

// NCCL's own WARN texts (src/misc/argcheck.cc, init.cc, enqueue.cc, group.cc, graph/xml.cc,
// transport/net_ib/*.cc), as NCCL prints them.
TEST_CASE("log cues: NCCL's argument, capture, topology-file and HCA checks name the fault", "[tree][cues]") {
  // argcheck.cc: the caller handed NCCL something wrong.
  CHECK(cue_supports(line_cues("h:1:2 [0] misc/argcheck.cc:40 NCCL WARN Reduce : invalid root 0 (root should be in "
                               "the 0..0 range)"),
                     "nccl_api_misuse", "user_code_bug"));
  CHECK(cue_supports(line_cues("Broadcast : sendbuff (nil) is not a valid pointer"), "nccl_api_misuse",
                     "user_code_bug"));
  CHECK(cue_supports(line_cues("h:1:2 [0] init.cc:840 NCCL WARN comm 0x7fdee40000c0 has already been destroyed"),
                     "nccl_api_misuse", "user_code_bug"));
  CHECK(cue_supports(line_cues("h:1:2 [1] misc/argcheck.cc:24 NCCL WARN AllReduce : sendbuff allocated on device 0 "
                               "mismatchs with NCCL device 1"),
                     "nccl_buffer_other_device", "wrong_device_binding"));
  CHECK(cue_supports(line_cues("h:1:2 [0] enqueue.cc:2596 NCCL WARN Streams given to a communicator within a NCCL "
                               "group must either be all uncaptured or all captured by the same graph."),
                     "nccl_capture_mix", "cuda_graph_or_stream_misuse"));
  // An injected topology / graph XML.
  CHECK(cue_supports(line_cues("h:1:2 [0] graph/xml.cc:498 NCCL WARN getXmlFromCpu: Unknown CPU architecture"),
                     "nccl_topology_xml_unusable", "nccl_config_error"));
  CHECK(cue_supports(line_cues("h:1:2 [0] graph/xml.cc:394 NCCL WARN XML Topology has wrong version 1, 2 needed"),
                     "nccl_topology_xml_unusable", "nccl_config_error"));
  // HCA selection mixing link types; a device NCCL listed but cannot open.
  CHECK(cue_supports(line_cues("h:1:2 [0] transport/net_ib/connect.cc:987 NCCL WARN NET/IB : Attempted to connect "
                               "incompatible devices: [0]mlx5_0:1/IB and [1]mlx5_2:1/RoCE. Try selecting NICs of "
                               "only one link type using NCCL_IB_HCA"),
                     "nccl_ib_incompatible_devices", "unusable_hca_selected"));
  CHECK(cue_supports(line_cues("h:1:2 [0] transport/net_ib/init.cc:334 NCCL WARN NET/IB : Unable to open device "
                               "mlx5_3"),
                     "nccl_ib_device_unusable", "unusable_hca_selected"));
  CHECK(cue_supports(line_cues("h:1:2 [0] misc/cudawrap.cc:285 NCCL WARN CUDA Driver version found is 11040. "
                               "Minimum requirement is 12000"),
                     "nccl_cuda_driver_too_old", "driver_library_mismatch"));
  // The same words in other contexts are no such cue.
  CHECK_FALSE(cue_supports(line_cues("h:1:2 [0] NCCL INFO Using network IB"), "nccl_api_misuse", "user_code_bug"));
}

TEST_CASE("verdicts: NCCL rejecting a call's arguments is the caller's bug", "[tree][verdict]") {
  const Report r = diagnose_text(
      "h:2396:2428 [0] NCCL INFO Bootstrap : Using [0]enp0s25:10.0.0.1<0>\n"
      "NCCL version 2.5.6+cuda10.2\n"
      "h:2396:2428 [0] misc/argcheck.cc:40 NCCL WARN Reduce : invalid root 0 (root should be in the 0..0 range)\n"
      "h:2396:2428 [0] NCCL INFO enqueue.cc:447 -> 4\n"
      "terminate called after throwing an instance of 'std::runtime_error'\n"
      "  what():  NCCL Error 4: invalid argument\n");
  CHECK(r.verdict.root_cause == "user_code_bug");
  REQUIRE(r.verdict.layer);
  CHECK(*r.verdict.layer == Layer::framework);
}

TEST_CASE("log facts: IB completion errors in the NCCL 2.28.7+ wording (status name and number)", "[tree][facts]") {
  for (const char* status : {"status=IBV_WC_RETRY_EXC_ERR(12)", "status=12"}) {
    EvidenceSet set;
    extract_log_facts(std::string("h1:1234:1300 [3] transport/net_ib/p2p.cc:688 NCCL WARN NET/IB: Got completion "
                                  "from peer 10.0.0.2<43210> with ") +
                          status + " opcode=IBV_WC_SEND(0) vendor_err=129 hca mlx5_0\n",
                      "t.log", "", set);
    bool found = false;
    for (const auto& f : set.findings)
      if (f.id == "log.ib_completion_error") found = f.fields.value("status", 0) == 12;
    CHECK(found);
  }
}

TEST_CASE("log facts: a traceback frame's source line is context, not a failure report", "[tree][facts]") {
  const Report r = diagnose_text(
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3/dist-packages/ray/_private/worker.py\", line 937, in get_objects\n"
      "    values, debugger_breakpoint = worker.get_objects(object_refs, timeout=timeout)\n"
      "  File \"/app/train.py\", line 12, in main\n"
      "    raise RuntimeError(\"failed: \" + msg)\n");
  size_t quoted = 0;
  for (const auto& f : r.findings) {
    CHECK(f.id != "log.python_exception");  // a source line is no uncaught exception
    if (f.id == "log.unrecognized_failure") {
      CHECK(f.summary.find("debugger_breakpoint") == std::string::npos);
      CHECK(f.summary.find("raise RuntimeError") == std::string::npos);
      ++quoted;
    }
  }
  CHECK(quoted == 1);  // the Traceback line itself still marks a failure
}

TEST_CASE("log cues: NCCL's kernels needing more shared memory than the GPU has is an NCCL release too old for it",
          "[tree][cues]") {
  // nccl-tests on RTX 5090 with NCCL 2.25.1 (NVIDIA/nccl-tests#287; fixed in 2.26.2).
  CHECK(has_cue(line_cues("host:4766:4780 [0] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856"),
                "nccl_device_smem", Layer::nccl));
  CHECK(has_cue(line_cues("h:1:2 [0] enqueue.cc:90 NCCL WARN cudaArch 1200 ncclMaxSharedMem 82240 exceeds device/fn "
                          "maxSharedMem 79856"),
                "nccl_device_smem", Layer::nccl));
  const Report r = diagnose_text(
      "host:4766:4766 [0] NCCL INFO NCCL version 2.25.1+cuda12.8\n"
      "host:4766:4780 [0] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856\n"
      "host:4766:4780 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.\n"
      "host:4766:4780 [0] NCCL INFO Failed to open libibverbs.so[.1]\n"
      "host:4766:4780 [0] enqueue.cc:1367 NCCL WARN Cuda failure 1 'invalid argument'\n");
  CHECK(r.verdict.root_cause == "nccl_bug");
}

TEST_CASE("log facts: the default net plugin absent is NCCL's start-up INFO, a requested one missing is a failure",
          "[tree][facts]") {
  auto plugin_failed = [](const std::string& line) {
    EvidenceSet set;
    extract_log_facts(line + "\n", "t.log", "", set);
    for (const auto& f : set.findings)
      if (f.id == "log.net_plugin_failed") return true;
    return false;
  };
  // Printed on every start without a plugin (2.19+, and the older wordings).
  CHECK_FALSE(plugin_failed("h:1:1 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin."));
  CHECK_FALSE(plugin_failed("h:1:1 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: "
                            "cannot open shared object file: No such file or directory"));
  CHECK_FALSE(plugin_failed("h:1:1 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation"));
  // "incompatible" about something else is no plugin failure.
  CHECK_FALSE(plugin_failed("RuntimeError: The NVIDIA driver on your system is too old / incompatible with this torch"));
  // A plugin asked for by name that does not load, or one NCCL rejects, is.
  CHECK(plugin_failed("h:1:1 [0] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net-gcp.so: cannot open shared "
                      "object file: No such file or directory"));
  CHECK(plugin_failed("h:1:1 [0] NCCL WARN Failed to initialize any NET plugin"));
  CHECK(plugin_failed("h:1:1 [0] NCCL WARN NET/Plugin: plugin v6 is incompatible with this NCCL"));
}

TEST_CASE("log cues: verbs failures in UCX, tensorpipe and bare wordings", "[tree][cues]") {
  // UCX's wording of a CQ allocation refused by RLIMIT_MEMLOCK (openucx/ucx issue 8229).
  const std::string ucx =
      "[1652739463.054681] [node1:4071024:0]        ib_iface.c:1035 UCX  ERROR ibv_create_cq(cqe=4096) failed: "
      "Cannot allocate memory";
  CHECK(has_cue(line_cues(ucx), "verbs_alloc_nomem", Layer::system_config));
  CHECK(diagnose_text(ucx + "\n").verdict.root_cause == "memlock_limit_too_low");
  CHECK(has_cue(line_cues("ibv_reg_mr failed: errno 12"), "verbs_alloc_nomem", Layer::system_config));
  // DMA-BUF registration pins nothing: its ENOMEM is not the memlock limit.
  CHECK_FALSE(has_cue(line_cues("ibv_reg_dmabuf_mr failed: Cannot allocate memory"), "verbs_alloc_nomem",
                      Layer::system_config));
  // NCCL's own wording is left to its signatures (no second vote for the same line).
  CHECK_FALSE(has_cue(line_cues("node1:1:2 [0] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_create_qp failed with "
                                "error Cannot allocate memory"),
                      "verbs_alloc_nomem", Layer::system_config));
  // ENOMEM elsewhere is not about verbs.
  CHECK_FALSE(has_cue(line_cues("mmap failed: Cannot allocate memory"), "verbs_alloc_nomem", Layer::system_config));

  // tensorpipe's verbs check inside a Python exception: the device, not the training script.
  const std::string tp = "RuntimeError: In operator() at tensorpipe/common/ibv.h:172 \"\": Operation not supported";
  CHECK(has_cue(line_cues(tp), "verbs_unsupported", Layer::transport));
  const Report r = diagnose_text(tp + "\n");
  CHECK(r.verdict.root_cause == "unusable_hca_selected");
  for (const auto& f : r.findings) CHECK(f.id != "log.python_exception");
  CHECK(has_cue(line_cues("UCX  ERROR   ibv_open_device(mlx5_0) failed: No such device"), "verbs_unsupported",
                Layer::transport));
  // Without a verbs call or file the errno alone is no verbs cue.
  CHECK_FALSE(has_cue(line_cues("open /dev/nvidia3 failed: No such device"), "verbs_unsupported", Layer::transport));
}

TEST_CASE("log cues: a PCIe link trained narrow, a missing GPU driver", "[tree][cues]") {
  // lspci -vv (pciutils >= 3.6) marks what is below the link's capability.
  CHECK(has_cue(line_cues("\t\tLnkSta:\tSpeed 16GT/s, Width x8 (downgraded)"), "pcie_width_downgraded",
                Layer::hardware));
  CHECK(diagnose_text("\t\tLnkSta:\tSpeed 16GT/s, Width x8 (downgraded)\nRuntimeError: NCCL timeout\n")
            .verdict.root_cause == "pcie_link_degraded");
  // A lower speed alone is also an idle GPU's power saving: a nudge, no verdict on its own.
  const auto speed = line_cues("\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16 (ok)");
  CHECK(has_cue(speed, "pcie_speed_downgraded", Layer::hardware));
  CHECK_FALSE(has_cue(speed, "pcie_width_downgraded", Layer::hardware));
  CHECK(diagnose_text("\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16 (ok)\n").verdict.root_cause ==
        kInsufficientEvidence);
  // LnkCap lines and prose without the lspci field are not link states.
  CHECK_FALSE(has_cue(line_cues("the link was Width x8 (downgraded) last week"), "pcie_width_downgraded",
                      Layer::hardware));

  // No driver reachable: the host's set-up, never the training script's exception.
  const std::string nodrv =
      "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a "
      "driver from http://www.nvidia.com/Download/index.aspx";
  CHECK(has_cue(line_cues(nodrv), "cuda_no_device", Layer::system_config));
  const Report r = diagnose_text(nodrv + "\n");
  CHECK(r.verdict.root_cause != "user_code_bug");
  for (const auto& f : r.findings) CHECK(f.id != "log.python_exception");
}

TEST_CASE("log cues: a queue pair that times out on its way to ready is not a TCP timeout", "[tree][cues]") {
  // A verbs library's own wording (uccl, perftest-style tools); NCCL's has a signature.
  const Report r = diagnose_text("Failed to modify QP to RTR: Connection timed out\nerrno: 110\n");
  CHECK(r.verdict.root_cause == "nic_pair_unreachable");
  for (const auto& f : r.findings) CHECK(f.id != "log.connect_timeout");
  CHECK(has_cue(line_cues("ib_mlx5dv_md.c:1100 UCX  ERROR mlx5_1: ibv_modify_qp(RC QP 0x2c5c) failed to modify to "
                          "RTR: Connection timed out"),
                "verbs_qp_transition_timeout", Layer::transport));
  // A TCP connect timing out is still one.
  CHECK(has_cue(line_cues("[c10d] The client socket has failed to connect to [node-1]:29500 (errno: 110 - Connection "
                          "timed out)."),
                "errno_timed_out", Layer::transport));
  CHECK_FALSE(has_cue(line_cues("[c10d] The client socket has failed to connect to [node-1]:29500 (errno: 110 - "
                                "Connection timed out)."),
                      "verbs_qp_transition_timeout", Layer::transport));
}

TEST_CASE("log cues: a topology node without an attribute NCCL needs places the failure in NCCL", "[tree][cues]") {
  // As torch prints NCCL's last error: no WARN prefix, no source file.
  const std::string attr = "[rank0]: Attribute busid of node nic not found";
  CHECK(has_cue(line_cues(attr), "nccl_topology_attr_missing", Layer::nccl));
  const Report r = diagnose_text(
      "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
      "ProcessGroupNCCL.cpp:1970, internal error - please report this issue to the NCCL developers, NCCL version "
      "2.20.5\n[rank0]: ncclInternalError: Internal check failed.\n[rank0]: Last error:\n" +
      attr + "\n");
  CHECK(r.verdict.layer == Layer::nccl);
  // Prose that only mentions an attribute is not the check.
  CHECK_FALSE(has_cue(line_cues("Attribute error: the node was not found"), "nccl_topology_attr_missing",
                      Layer::nccl));
}

TEST_CASE("log cues: a UCX endpoint timeout is the peer NIC unreachable over the fabric", "[tree][cues]") {
  // ud_ep.c and ud_iface.c wordings (UCX 1.4-1.11), with an mpirun --tag-output prefix on one.
  const std::string ud = "[node-a:17626:0:17626]       ud_ep.c:270  Fatal: UD endpoint 0x2345930 to <no debug "
                         "data>: unhandled timeout error";
  const std::string iface = "Tue Apr 10 02:29:25 2018[1,383]<stderr>:[node-b:15382:0:15382]    ud_iface.c:781  "
                            "Fatal: transport error: Endpoint timeout";
  CHECK(has_cue(line_cues(ud), "ucx_endpoint_timeout", Layer::transport));
  CHECK(has_cue(line_cues(iface), "ucx_endpoint_timeout", Layer::transport));
  // "transport error" is no port going down.
  CHECK_FALSE(has_cue(line_cues(iface), "ibv_async_port", Layer::hardware));
  CHECK(has_cue(line_cues("NET/IB : Got async event : port error"), "ibv_async_port", Layer::hardware));
  // A symptom: the verdict names the fabric-level causes behind it, in the transport layer.
  const Report r = diagnose_text(ud + "\n");
  CHECK(r.verdict.layer == Layer::transport);
  CHECK(r.verdict.confidence < 0.5);
  // Timeouts of other endpoints (an HTTP client's) are not UCX's.
  CHECK_FALSE(has_cue(line_cues("requests.exceptions.ReadTimeout: Endpoint timeout after 30 s"),
                      "ucx_endpoint_timeout", Layer::transport));
  // UCX's mlx5 wording of IBV_WC_RETRY_EXC_ERR.
  CHECK(has_cue(line_cues("ib_mlx5_log.c:143  Transport retry count exceeded on mlx5_0:1/RoCE (synd 0x15 vend 0x81 "
                          "hw_synd 0/0)"),
                "ibv_wc_retry", Layer::transport));
}

TEST_CASE("log cues: gloo's enforce condition tells a missing interface from an unbindable host name", "[tree][cues]") {
  // As a real torch 2.15 job printed it with GLOO_SOCKET_IFNAME naming no interface of the host.
  const std::string iface = "RuntimeError: [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
                            "device.cc:84] ifa != nullptr. Unable to find address for: eth9";
  const auto ic = line_cues(iface);
  CHECK(has_cue(ic, "gloo_iface_missing", Layer::system_config));
  CHECK_FALSE(has_cue(ic, "gloo_iface_no_address", Layer::system_config));
  const Report r = diagnose_text(iface + "\n");
  CHECK(r.verdict.root_cause == "wrong_network_interface");
  CHECK(r.verdict.basis == "evidence");
  CHECK(r.verdict.confidence >= 0.4);
  // The host-name lookup's enforce.
  const auto hc = line_cues("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:183] rp "
                            "!= nullptr. Unable to find address for: node-7");
  CHECK(has_cue(hc, "gloo_hostname_unbindable", Layer::system_config));
  CHECK_FALSE(has_cue(hc, "gloo_iface_missing", Layer::system_config));
  // The message without the condition keeps the general cue.
  CHECK(has_cue(line_cues("Unable to find address for: ib0"), "gloo_iface_no_address", Layer::system_config));
}

TEST_CASE("log cues: a CUDA error in a custom all-reduce kernel is the P2P path, not the serving script",
          "[tree][cues]") {
  const std::string car = "(VllmWorkerProcess pid=2213) ERROR 05-01 10:00:00 multiproc_worker_utils.py:226] "
                          "RuntimeError: Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:368 'invalid argument'";
  CHECK(has_cue(line_cues(car), "custom_allreduce_cuda_error", Layer::hardware));
  // A CUDA error's 'invalid argument' is no NCCL API misuse.
  CHECK_FALSE(has_cue(line_cues(car), "nccl_invalid_usage", Layer::framework));
  const Report r = diagnose_text(car + "\n");
  CHECK(r.verdict.root_cause != "user_code_bug");
  CHECK(r.verdict.layer == Layer::hardware);
  for (const auto& f : r.findings) CHECK(f.id != "log.python_exception");
  // Its set-up chatter is no failure.
  CHECK_FALSE(has_cue(line_cues("INFO custom_all_reduce_utils.py:232] reading GPU P2P access cache"),
                      "custom_allreduce_cuda_error", Layer::hardware));
}

TEST_CASE("log facts: the CUDA runtime's out-of-memory error is a rank out of GPU memory", "[tree][cues]") {
  // SGLang's CUDA graph capture failing: the CUDA API's error string, not torch's allocator message.
  const Report r = diagnose_text(
      "[2025-02-22 08:21:50 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
      "RuntimeError: CUDA error: out of memory\n"
      "Exception: Capture cuda graph failed: CUDA error: out of memory\n");
  CHECK(r.verdict.root_cause == "gpu_memory_exhausted");
  CHECK(r.verdict.layer == Layer::framework);
  // Another CUDA error is not.
  CHECK(diagnose_text("RuntimeError: CUDA error: an illegal memory access was encountered\n").verdict.root_cause !=
        "gpu_memory_exhausted");
}

TEST_CASE("log cues: torch's device-count assert and 'no GPUs found' place the failure", "[tree][cues]") {
  CHECK(has_cue(line_cues("torch.cuda.DeferredCudaCallError: CUDA call failed lazily at initialization with error: "
                          "device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "
                          "\"../aten/src/ATen/cuda/CUDAContext.cpp\":50, please report a bug to PyTorch. device=4, "
                          "num_gpus=4"),
                "cuda_invalid_device", Layer::framework));
  CHECK(has_cue(line_cues("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!"),
                "cuda_no_device", Layer::system_config));
}
