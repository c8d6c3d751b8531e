// Log analyser end to end on fixtures: the real incidents of
// fixtures/logs/cases, the 16-rank first-failure/cascade log (per-rank files
// and one interleaved torchrun stdout), streaming through tiny blocks, and
// the kernel-log entry point built on the same engine.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <fstream>
#include <set>
#include <sstream>

#include <zlib.h>

#include "collectors/kernel/kernel_log.hpp"
#include "collectors/logs/analyzer.hpp"
#include "ccdiag/line_prefix.hpp"
#include "collectors/logs/reader.hpp"

using namespace ccdiag;
using namespace ccdiag::logs;

namespace {

const std::string kFix = CCDIAG_FIXTURES "/logs/";

LogAnalysis analyse(const std::vector<std::string>& paths) {
  auto a = LogAnalyzer::create(builtin_signatures());
  REQUIRE(a);
  auto inputs = expand_log_paths(paths);
  REQUIRE(inputs);
  for (const auto& in : *inputs) REQUIRE((*a)->add_file(in));
  return (*a)->finish();
}

const Finding* find(const LogAnalysis& a, const std::string& id) {
  for (const auto& f : a.findings)
    if (f.id == id) return &f;
  return nullptr;
}

bool supports(const Finding& f, const std::string& cause) {
  for (const auto& s : f.supports)
    if (s.cause == cause && s.weight > 1) return true;
  return false;
}

const Finding& first_failure(const LogAnalysis& a) {
  REQUIRE(a.first_failure);
  return a.findings.at(*a.first_failure);
}

}  // namespace

TEST_CASE("16 ranks: rank 5 fails first, the other 15 ranks are cascades", "[logs]") {
  for (const std::string input : {kFix + "ib_retry_exceeded_16_ranks", kFix + "ib_retry_exceeded_16_ranks_interleaved.log"}) {
    INFO(input);
    auto a = analyse({input});
    REQUIRE(a.findings.size() > 2);
    // Named first: the summary finding, then the failure itself.
    CHECK(a.findings[0].id == "logs.first_failure");
    CHECK(a.findings[0].subject.rank == 5);
    const Finding& ff = first_failure(a);
    CHECK(ff.id == "nccl.ib.completion_error.retry_exceeded");
    CHECK(ff.subject.rank == 5);
    CHECK(ff.subject.host == "gpu-node-01");
    CHECK(ff.subject.nic == "mlx5_5");
    CHECK(ff.fields["status"] == 12);
    CHECK(ff.fields["vendor_err"] == 129);
    CHECK(ff.role == FindingRole::primary);
    std::set<int> cascade_ranks;
    for (const auto& f : a.findings) {
      if (!f.subject.rank || *f.subject.rank == 5 || f.role == FindingRole::context) continue;
      INFO(f.id << " rank " << *f.subject.rank << " " << f.summary);
      CHECK(f.role == FindingRole::cascade);
      REQUIRE(f.caused_by);
      CHECK(f.caused_by->find("rank 5") != std::string::npos);
      cascade_ranks.insert(*f.subject.rank);
    }
    CHECK(cascade_ranks.size() == 15);
    // Topology: 16 processes, 2 nodes, one NCCL version.
    size_t topo = 0;
    for (const auto& e : a.evidence)
      if (e.kind == "nccl.topology") ++topo;
    CHECK(topo == 16);
    CHECK(find(a, "logs.nccl_version_skew") == nullptr);
    CHECK(find(a, "logs.nnodes_below_hosts") == nullptr);
  }
}

TEST_CASE("case 003: /dev/shm full in a pod; socket errors on the other local rank are cascades", "[logs]") {
  auto a = analyse({kFix + "cases/k8s_pod_dev_shm_64mb.log"});
  const Finding& ff = first_failure(a);
  CHECK(ff.id == "nccl.shm.extend_failed");
  CHECK(ff.fields["errno"] == 28);
  CHECK(ff.fields["size"] == 9637892);
  CHECK(ff.fields["path"] == "/dev/shm/nccl-WU88OE");
  CHECK(ff.time == "2026-04-22 21:34:20");
  CHECK(supports(ff, "container_shm_too_small"));
  bool cascade_on_dev2 = false;
  for (const auto& f : a.findings)
    if (f.id == "nccl.error_breadcrumb" && f.subject.gpu == "2") {
      CHECK(f.role == FindingRole::cascade);
      CHECK(f.caused_by.has_value());
      cascade_on_dev2 = true;
    }
  CHECK(cascade_on_dev2);
}

TEST_CASE("case 007: NCCL_SOCKET_IFNAME set, no bootstrap interface, garbage address family", "[logs]") {
  auto a = analyse({kFix + "cases/socket_ifname_nonexistent_interface.log"});
  const Finding* d = find(a, "logs.socket_ifname_without_bootstrap");
  REQUIRE(d);
  CHECK(d->fields["NCCL_SOCKET_IFNAME"] == "eth2");
  CHECK(supports(*d, "wrong_network_interface"));
  const Finding* fam = find(a, "nccl.socket.bad_address_family");
  REQUIRE(fam);
  CHECK(fam->fields["family"] == 59936);
  CHECK(fam->subject.rank == 0);
  const Finding* internal = find(a, "nccl.result.internal_error");
  REQUIRE(internal);
  CHECK(internal->role != FindingRole::primary);  // a symptom of the bad address, not an NCCL bug
  CHECK(first_failure(a).id == "nccl.socket.bad_address_family");
}

TEST_CASE("case 009: collective fingerprint mismatch from Lightning metric sync", "[logs]") {
  auto a = analyse({kFix + "cases/lightning_log_dict_keys_differ.log"});
  const Finding* m = find(a, "pytorch.collective_mismatch");
  REQUIRE(m);
  CHECK(m->fields["seq"] == 21);
  CHECK(m->fields["op"] == "BROADCAST");
  CHECK(m->subject.rank == 1);
  CHECK(m->subject.seq == 21);
  CHECK(supports(*m, "mismatched_collectives"));
  CHECK(find(a, "lightning.sync_ddp") != nullptr);
  CHECK(first_failure(a).id == "pytorch.collective_mismatch");
}

TEST_CASE("case 010: P2P/IPC ring edge between ranks on different nodes", "[logs]") {
  auto a = analyse({kFix + "cases/hostname_prefix_same_host_ipc.log"});
  const Finding* p = find(a, "logs.p2p_edge_across_hosts");
  REQUIRE(p);
  CHECK(p->fields["from_rank"] == 6);
  CHECK(p->fields["to_rank"] == 10);
  CHECK(p->summary.find("6[6] -> 10[2] via P2P/IPC") != std::string::npos);
  CHECK(supports(*p, "nccl_bug"));
  CHECK(find(a, "nccl.result.unhandled_cuda_error") != nullptr);
}

TEST_CASE("case 012: silent hang after init on a machine with two P2P pairs", "[logs]") {
  auto a = analyse({kFix + "cases/intel_iommu_p2p_allreduce_hang.log"});
  const Finding* h = find(a, "logs.silent_hang_after_init");
  REQUIRE(h);
  CHECK(h->fields["p2p_capable_pairs"] == nlohmann::json({"0-1", "2-3"}));
  CHECK(supports(*h, "iommu_blocks_p2p"));
  CHECK_FALSE(a.first_failure);  // no error line at all
  const Finding* v = find(a, "nccl_tests.device");
  REQUIRE(v);
  bool version = false;
  for (const auto& e : a.evidence)
    if (e.kind == "nccl.version" && e.data["version"] == "2.4.8") version = true;
  CHECK(version);
}

TEST_CASE("case 029: container RoCE HCA unusable, error propagates as ncclSystemError", "[logs]") {
  auto a = analyse({kFix + "cases/container_roce_modify_qp_no_such_device.log"});
  const Finding& ff = first_failure(a);
  CHECK(ff.id == "nccl.ib.modify_qp_enodev");
  CHECK(supports(ff, "unusable_hca_selected"));
  CHECK(find(a, "nccl.ib.modify_qp_failed") == nullptr);  // the fallback yields
  const Finding* b = find(a, "nccl.error_breadcrumb");
  REQUIRE(b);
  CHECK(b->fields["result"] == "ncclSystemError");
  CHECK(b->fields["occurrences"] == 8);
  CHECK(b->summary.find("transport/net_ib.cc:395") != std::string::npos);
  CHECK(b->summary.find("group.cc:73") != std::string::npos);
  bool nic = false;
  for (const auto& e : a.evidence)
    if (e.kind == "nccl.topology" && e.data["nics"].get<std::string>().find("mlx5_3:1/RoCE") != std::string::npos)
      nic = true;
  CHECK(nic);
}

TEST_CASE("case 002: watchdog checkTimeout stack means a collective never completed", "[logs]") {
  auto a = analyse({kFix + "cases/rank0_only_eval_watchdog_timeout.log"});
  const Finding* w = find(a, "pytorch.watchdog.stack");
  REQUIRE(w);
  CHECK(w->summary.find("checkTimeout") != std::string::npos);
  CHECK(supports(*w, "rank_skips_collective"));
}

TEST_CASE("version and env skew across ranks", "[logs]") {
  auto a = LogAnalyzer::create(builtin_signatures());
  REQUIRE(a);
  (*a)->add_text("nodeA:100:100 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
                 "nodeA:100:100 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 3\n",
                 "rank0.log", "");
  (*a)->add_text("nodeB:200:200 [0] NCCL INFO NCCL version 2.19.3+cuda12.2\n"
                 "nodeB:200:200 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 0\n",
                 "rank1.log", "");
  auto r = (*a)->finish();
  const Finding* v = find(r, "logs.nccl_version_skew");
  REQUIRE(v);
  CHECK(v->fields["versions"].size() == 2);
  const Finding* e = find(r, "logs.nccl_env_skew");
  REQUIRE(e);
  CHECK(e->fields["var"] == "NCCL_IB_GID_INDEX");
}

TEST_CASE("nNodes lower than the number of hosts logging", "[logs]") {
  auto a = LogAnalyzer::create(builtin_signatures());
  REQUIRE(a);
  (*a)->add_text("gpu-a1:10:10 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n"
                 "gpu-a2:20:20 [0] NCCL INFO comm 0x2 rank 1 nRanks 2 nNodes 1 localRanks 2 localRank 1 MNNVL 0\n",
                 "job.log", "");
  auto r = (*a)->finish();
  const Finding* n = find(r, "logs.nnodes_below_hosts");
  REQUIRE(n);
  CHECK(n->fields["nnodes"] == 1);
}

TEST_CASE("line prefixes: NCCL, torchrun, srun, timestamps", "[logs]") {
  auto p = parse_line_prefix("[2026-04-22 21:34:20] node-3:202016:202235 [2] misc/shmutils.cc:88 NCCL WARN Error");
  CHECK(p.host == "node-3");
  CHECK(p.pid == 202016);
  CHECK(p.tid == 202235);
  CHECK(p.dev == 2);
  CHECK(p.level == "WARN");
  CHECK(p.time_kind == TimeKind::wall);
  p = parse_line_prefix("[rank12]:[E0422 21:44:21.000003 41203 ProcessGroupNCCL.cpp:632] [Rank 12] Watchdog");
  CHECK(p.rank == 12);
  CHECK(p.time_kind == TimeKind::glog);
  CHECK(p.body.substr(0, 9) == "[Rank 12]");
  p = parse_line_prefix("[trainer0|0]:ncclInternalError: Internal check failed.");
  CHECK(p.rank == 0);
  CHECK(p.body == "ncclInternalError: Internal check failed.");
  p = parse_line_prefix("3: node1:11:12 [1] NCCL INFO Using network IB");
  CHECK(p.rank == 3);
  CHECK(p.host == "node1");
  p = parse_line_prefix("[default2]:RuntimeError: boom");
  CHECK_FALSE(p.rank);
  CHECK(p.body == "RuntimeError: boom");
  p = parse_line_prefix("[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79");
  CHECK(p.time_kind == TimeKind::uptime);
  CHECK(p.body.substr(0, 4) == "NVRM");
  CHECK(rank_from_filename("logs/rank_05.log.gz") == 5);
  CHECK_FALSE(rank_from_filename("train.log"));
}

TEST_CASE("ANSI colour, CRLF and truncated lines still match", "[logs]") {
  auto a = LogAnalyzer::create(builtin_signatures());
  REQUIRE(a);
  (*a)->add_text("\x1b[31mnode1:1:1 [0] misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/nccl-x to 100 "
                 "bytes, error: No space left on device (28)\x1b[0m\r\n"
                 "node1:1:1 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remo",
                 "mixed.log", "");
  auto r = (*a)->finish();
  const Finding* f = find(r, "nccl.shm.extend_failed");
  REQUIRE(f);
  CHECK(f->fields["errno"] == 28);
  CHECK(f->provenance.at(0).excerpt.find('\x1b') == std::string::npos);
  CHECK(r.stats.lines == 2);
}

TEST_CASE("reader streams .gz and plain files through small blocks without losing lines", "[logs]") {
  const auto dir = std::filesystem::temp_directory_path() / "ccdiag_logs_reader_test";
  std::filesystem::create_directories(dir);
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "node1:7:7 [0] NCCL INFO line " + std::to_string(i) + " padding padding\n";
  text += "node1:7:7 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer n2<1>\n";
  const auto gz = (dir / "rank3.log.gz").string();
  gzFile g = gzopen(gz.c_str(), "wb");
  REQUIRE(g);
  gzwrite(g, text.data(), static_cast<unsigned>(text.size()));
  gzclose(g);
  auto r = LogReader::open(gz, "rank3.log.gz", 4096);
  REQUIRE(r);
  std::string back;
  for (;;) {
    auto b = (*r)->next();
    REQUIRE(b);
    if (b->empty()) break;
    CHECK(b->size() <= 4096);
    CHECK(b->back() == '\n');
    back.append(*b);
  }
  CHECK((*r)->compressed());
  CHECK(back == text);
  auto a = analyse({gz});
  CHECK(a.stats.lines == 5001);
  const Finding* f = find(a, "nccl.socket.connection_closed");
  REQUIRE(f);
  CHECK(f->provenance.at(0).line == 5001);
  CHECK(f->subject.rank == 3);  // from the file name
  std::filesystem::remove_all(dir);
}

TEST_CASE("binary garbage and missing files are input errors", "[logs]") {
  const auto dir = std::filesystem::temp_directory_path() / "ccdiag_logs_binary_test";
  std::filesystem::create_directories(dir);
  const auto bin = (dir / "core.bin").string();
  {
    std::ofstream o(bin, std::ios::binary);
    for (int i = 0; i < 4096; ++i) o.put(static_cast<char>(i * 7));
  }
  auto a = LogAnalyzer::create(builtin_signatures());
  REQUIRE(a);
  auto st = (*a)->add_file(LogInput{bin, bin, ""});
  REQUIRE_FALSE(st);
  CHECK(st.error().message.find("binary") != std::string::npos);
  CHECK_FALSE(expand_log_paths({(dir / "missing.log").string()}));
  std::filesystem::remove_all(dir);
}

TEST_CASE("kernel log entry point runs on the log engine", "[logs][kernel]") {
  const std::string text =
      "6,1234,5678901,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=41205, name=python3, GPU has fallen off the bus.\n"
      "{\"MESSAGE\":\"Out of memory: Killed process 41205 (python3) total-vm:1kB\"}\n"
      "{not json\n"
      "[ 7654.321000] nvidia 0000:3b:00.0: PCIe Bus Error: severity=Uncorrectable (Fatal), type=Transaction Layer, "
      "(Receiver ID)\n";
  auto k = parse_kernel_log(text, "raw/kernel.log", "node7");
  CHECK(k.lines == 4);
  CHECK(k.skipped == 1);
  auto has = [&](const std::string& id) {
    for (const auto& f : k.set.findings)
      if (f.id == id) return &f;
    return static_cast<const Finding*>(nullptr);
  };
  const Finding* x = has("kernel.xid");
  REQUIRE(x);
  CHECK(x->subject.gpu == "0000:3b:00.0");
  CHECK(x->subject.host == "node7");
  CHECK(x->provenance.at(0).line == 1);
  CHECK(has("kernel.oom_kill"));
  CHECK(has("kernel.aer.fatal"));
  REQUIRE(k.set.evidence.size() == 1);
  CHECK(k.set.evidence[0].kind == "kernel.log");
  CHECK(k.set.evidence[0].data["xid_count"] == 1);
}

TEST_CASE("captures too long for a number stay strings and never throw (fuzz regression)", "[logs]") {
  auto a = LogAnalyzer::create(builtin_signatures());
  REQUIRE(a);
  (*a)->add_text("n1:1:1 [0] NCCL INFO misc/socket.cc:99999999999999999999999 -> 99999999999999999999999\n"
                 "  rank      : 99999999999999999999 (local_rank: 0)\n"
                 "  exitcode  : 1 (pid: 42)\n",
                 "fuzz.log", "");
  auto r = (*a)->finish();
  const Finding* b = find(r, "nccl.error_breadcrumb");
  REQUIRE(b);
  CHECK(b->fields["code"].is_string());
}

TEST_CASE("net plugin: the default name probed and absent is context; a requested plugin that fails votes",
          "[logs]") {
  auto plugin_finding = [](const std::string& line) {
    auto a = LogAnalyzer::create(builtin_signatures());
    REQUIRE(a);
    (*a)->add_text(line + "\n", "nccl.log", "");
    const LogAnalysis r = (*a)->finish();
    const Finding* f = find(r, "nccl.net.plugin_load_failed");
    REQUIRE(f);
    return *f;
  };
  for (const char* benign :
       {"h:1:1 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
        "h:1:1 [0] NCCL INFO NET/Plugin : Plugin load returned 2 : libnccl-net.so: cannot open shared object file: "
        "No such file or directory"}) {
    const Finding f = plugin_finding(benign);
    CHECK(f.role == FindingRole::context);
    CHECK(f.supports.empty());
  }
  const Finding asked = plugin_finding(
      "node7:41205:41205 [5] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net-gcp.so: cannot open shared "
      "object file: No such file or directory");
  CHECK(asked.role != FindingRole::context);
  CHECK(supports(asked, "net_plugin_mismatch"));
}
