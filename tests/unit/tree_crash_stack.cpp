// A native crash and its stack, in the forms glog / absl, PyTorch's c10,
// gdb and the kernel print them: a crash with NCCL's own code among the
// innermost frames is a crash in NCCL; PyTorch aborting on purpose is not.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "analysis/tree/log_facts.hpp"

using namespace ccdiag;

namespace {

// The findings of the given ids that the log's text gives.
std::vector<Finding> findings_of(const std::string& text, std::initializer_list<std::string_view> ids) {
  EvidenceSet set;
  extract_log_facts(text, "rank3.log", "node3", set);
  std::vector<Finding> out;
  for (const auto& f : set.findings)
    for (std::string_view id : ids)
      if (f.id == id) out.push_back(f);
  return out;
}

std::vector<Finding> crash_findings(const std::string& text) {
  return findings_of(text, {"log.crash_in_nccl", "log.crash_in_net_plugin"});
}

double weight(const Finding& f, const char* cause) {
  for (const auto& s : f.supports)
    if (s.cause == cause) return s.weight;
  return 0;
}

}  // namespace

TEST_CASE("crash stacks: a glog SIGSEGV report whose innermost named frame is NCCL's",
          "[tree][crash-stack]") {
  const auto fs = crash_findings(
      "[rank3]:*** SIGSEGV (@0x0) received by PID 2211 (TID 0x7f3a2bfff640) from PID 0; stack trace: ***\n"
      "    @     0x7f3b7e4a2520 (unknown)\n"
      "    @     0x7f3a9c6f1e3a ncclProxyProgress()\n"
      "    @     0x7f3a9c6f2a11 ncclProxyService()\n"
      "    @     0x7f3b7e4f4ac3 (unknown)\n");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].id == "log.crash_in_nccl");
  CHECK(fs[0].layer == Layer::nccl);
  CHECK(fs[0].summary.find("ncclProxyProgress") != std::string::npos);
  CHECK(fs[0].provenance[0].line == 1);
  CHECK(weight(fs[0], "nccl_bug") > 1);
}

TEST_CASE("crash stacks: c10 and gdb frames, unnamed code in libnccl, the kernel's segfault line",
          "[tree][crash-stack]") {
  // c10's frames: an unnamed function is placed by its library.
  auto fs = crash_findings(
      "Segmentation fault (core dumped)\n"
      "frame #0: <unknown function> + 0x42520 (0x7f3b7e4a2520 in /lib/x86_64-linux-gnu/libc.so.6)\n"
      "frame #1: <unknown function> + 0x5a7f2 (0x7f1c8a55a7f2 in /usr/lib/x86_64-linux-gnu/libnccl.so.2)\n");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].summary.find("libnccl.so.2") != std::string::npos);
  // gdb after glibc's heap check; abort's own frames are skipped.
  fs = crash_findings(
      "free(): corrupted unsorted chunks\n"
      "#0  __pthread_kill_implementation (no_tid=0, signo=6, threadid=<optimized out>) at "
      "./nptl/pthread_kill.c:44\n"
      "#1  0x00007f3b7e4a0476 in __GI_raise (sig=sig@entry=6) at ../sysdeps/posix/raise.c:26\n"
      "#2  0x00007f3b7e4867f3 in __GI_abort () at ./stdlib/abort.c:79\n"
      "#3  0x00007f3b7e4e76f6 in __libc_message (action=do_abort) at ../sysdeps/posix/libc_fatal.c:155\n"
      "#4  0x00007f3b7e4fed7c in malloc_printerr (str=<optimized out>) at ./malloc/malloc.c:5664\n"
      "#5  0x00007f3b7e500f0a in _int_free (av=<optimized out>) at ./malloc/malloc.c:4441\n"
      "#6  0x00007f1c8a5a7f2a in ncclCommDestroy () from /usr/lib/x86_64-linux-gnu/libnccl.so.2\n");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].summary.find("ncclCommDestroy") != std::string::npos);
  // The kernel names the object the faulting instruction was in.
  fs = crash_findings(
      "[Thu Dec  3 02:14:09 2026] python[2211]: segfault at 0 ip 00007f3a9c6f1e3a sp 00007f3a2bffe9f0 error "
      "4 in "
      "libnccl.so.2.18.3[7f3a9c600000+1b2000]\n");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].id == "log.crash_in_nccl");
  // A net plugin's library is the plugin's matter.
  fs = crash_findings(
      "[Thu Dec  3 02:14:09 2026] python[2211]: segfault at 8 ip 00007f3a9c6f1e3a sp 00007f3a2bffe9f0 error "
      "4 in "
      "libnccl-net.so[7f3a9c600000+1b2000]\n");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].id == "log.crash_in_net_plugin");
  CHECK(weight(fs[0], "net_plugin_mismatch") > 1);
}

TEST_CASE("crash stacks: not a crash in NCCL", "[tree][crash-stack]") {
  // The crash is in the user's extension; NCCL is further out than the innermost frames.
  CHECK(crash_findings("*** SIGSEGV (@0x8) received by PID 7 (TID 0x7f) from PID 8; stack trace: ***\n"
                       "    @     0x7f3b7e4a2520 (unknown)\n"
                       "    @     0x7f1000000010 my_ext::scatter_rows()\n"
                       "    @     0x7f1000000020 my_ext::forward()\n"
                       "    @     0x7f1000000030 at::native::call()\n"
                       "    @     0x7f1000000040 torch::autograd::run()\n"
                       "    @     0x7f1c8a5a7f2a ncclAllReduce()\n")
            .empty());
  // PyTorch's watchdog rethrowing a timeout aborts the process: its stack is c10d's, and NCCL frames
  // after it are not where anything crashed.
  CHECK(crash_findings(
            "terminate called after throwing an instance of 'c10::DistBackendError'\n"
            "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group watchdog thread terminated "
            "with exception: [Rank 1] Watchdog caught collective operation timeout\n"
            "Fatal Python error: Aborted\n"
            "frame #0: ncclCommWatchdog + 0x12 (0x7f1c8a5a7f2a in /usr/lib/x86_64-linux-gnu/libnccl.so.2)\n")
            .empty());
  // Frames with no crash before them (an exception's trace) place nothing.
  CHECK(crash_findings(
            "frame #3: ncclGroupEnd + 0x2a (0x7f1c8a5a7f2a in /usr/lib/x86_64-linux-gnu/libnccl.so.2)\n")
            .empty());
  // A crash window closes: frames 100 lines later are another matter.
  std::string late = "Segmentation fault (core dumped)\n";
  for (int i = 0; i < 100; ++i) late += "step " + std::to_string(i) + " loss 2.0\n";
  late += "#3  0x00007f1c8a5a7f2a in ncclProxyProgress () from /usr/lib/x86_64-linux-gnu/libnccl.so.2\n";
  CHECK(crash_findings(late).empty());
}

TEST_CASE("crash stacks: backtrace_symbols frames (Open MPI's and UCX's handlers, bare)", "[tree][crash-stack]") {
  // Open MPI's handler behind its "[host:pid]" prefix (nccl-tests under mpirun); frame 0 is libc's
  // signal return, frame 1 unnamed code in libnccl. Lines as posted in public NCCL issue threads.
  auto fs = crash_findings(
      "<host>:62764:62764 [0] NCCL INFO Initialized NET plugin IB\n"
      "[<host>:62764] *** Process received signal ***\n"
      "[<host>:62764] Signal: Segmentation fault (11)\n"
      "[<host>:62764] Signal code: Address not mapped (1)\n"
      "[<host>:62764] Failing at address: 0x7\n"
      "[<host>:62764] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x45330)[0x78ad44045330]\n"
      "[<host>:62764] [ 1] /lib/x86_64-linux-gnu/libnccl.so.2(+0x14e63f)[0x78ad4494e63f]\n"
      "[<host>:62764] [ 2] /lib/x86_64-linux-gnu/libnccl.so.2(+0x85f89)[0x78ad44885f89]\n");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].id == "log.crash_in_nccl");
  CHECK(fs[0].summary.find("libnccl.so.2") != std::string::npos);
  CHECK(fs[0].provenance[0].line == 3);
  // A timestamp before the prefix, no address after the frame.
  fs = crash_findings(
      "[host:00142] Signal: Segmentation fault (11)\n"
      "2026-08-31 12:27:50 [host:00142] [ 1] /usr/lib/x86_64-linux-gnu/libc.so.6(getenv+0x56)\n"
      "2026-08-31 12:27:50 [host:00142] [ 2] /usr/lib/x86_64-linux-gnu/libnccl.so.2(+0x12e8a2)\n");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].summary.find("getenv <- libnccl.so.2") != std::string::npos);
  // UCX's handler: frame number, two blanks, a named (mangled) NCCL symbol.
  fs = crash_findings(
      "[node2:12345:0:12345] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x8)\n"
      "==== backtrace (tid:  12345) ====\n"
      " 0  /opt/ucx/lib/libucs.so.0(ucs_handle_error+0x2dc) [0x7fc7401db8ec]\n"
      " 1  /opt/ucx/lib/libucs.so.0(+0x36c8d) [0x7fc7401dbc8d]\n"
      " 2  /opt/ucx/lib/libucs.so.0(+0x36f76) [0x7fc7401dbf76]\n"
      " 3  /opt/nccl/lib/libnccl.so.2(_Z24ncclTopoGetSystemFromXmlP7ncclXmlPP14ncclTopoSystem+0x1ec) "
      "[0x7fc74319e80b]\n");
  // UCX's handler frames are skipped like libc's: the NCCL function is the innermost frame.
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].summary.find("(_Z24ncclTopoGetSystemFromXml") != std::string::npos);
  CHECK(fs[0].summary.find("libucs") == std::string::npos);
  // Prose that mentions a path with parentheses is no frame.
  CHECK(crash_findings("Segmentation fault (core dumped)\n"
                       "see /usr/lib/x86_64-linux-gnu/libnccl.so.2(+0x1) for details\n")
            .empty());
}

TEST_CASE("crash stacks: a process-group log line before a real crash does not make it deliberate",
          "[tree][crash-stack]") {
  // torch logs ProcessGroupNCCL lines all the time; only "terminate called after throwing" starts an abort.
  const auto fs = crash_findings(
      "[rank3]:[I1205 10:00:00.000000 2211 ProcessGroupNCCL.cpp:1050] [PG ID 0 PG GUID 0 Rank 3] "
      "ProcessGroupNCCL initialization options: size: 8, global rank: 3\n"
      "*** SIGSEGV (@0x0) received by PID 2211 (TID 0x7f3a2bfff640) from PID 0; stack trace: ***\n"
      "    @     0x7f3b7e4a2520 (unknown)\n"
      "    @     0x7f3a9c6f1e3a ncclProxyProgress()\n");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].provenance[0].line == 2);
}

namespace {

std::vector<Finding> native_findings(const std::string& text) { return findings_of(text, {"log.native_crash"}); }

}  // namespace

TEST_CASE("crash stacks: a native fault with no NCCL frame", "[tree][crash-stack]") {
  const std::string nccl_init =
      "node3:405884:407462 [0] NCCL INFO RAS client listening socket at ::1<28028>\n"
      "node3:405884:407462 [0] NCCL INFO comm 0x5581 rank 3 nranks 8 cudaDev 0 busId 1b000 - Init COMPLETE\n";
  // glibc's heap check in a process that runs NCCL: a fault in native code, a nudge towards a library defect.
  auto fs = native_findings(nccl_init +
                            "free(): corrupted unsorted chunks\n"
                            "[node3:405884] *** Process received signal ***\n"
                            "[node3:405884] Signal: Aborted (6)\n");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].layer == Layer::nccl);
  CHECK(fs[0].role == FindingRole::primary);
  CHECK(fs[0].summary.find("heap corruption") != std::string::npos);
  CHECK(fs[0].provenance[0].line == 3);
  CHECK(weight(fs[0], "nccl_bug") > weight(fs[0], "user_code_bug"));
  // Open MPI's handler for a segfault, frames in the user's extension only.
  fs = native_findings(nccl_init +
                       "[node3:405884] *** Process received signal ***\n"
                       "[node3:405884] Signal: Segmentation fault (11)\n"
                       "[node3:405884] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x42520)[0x7f3b7e4a2520]\n"
                       "[node3:405884] [ 1] /opt/ext/my_ext.so(scatter_rows+0x10)[0x7f1000000010]\n");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].summary.find("scatter_rows") != std::string::npos);
  // The stack places the fault in the extension: evidence for that code, not for NCCL.
  CHECK(weight(fs[0], "user_code_bug") > weight(fs[0], "nccl_bug"));
  // Without NCCL lines the fault is told, but votes for no cause.
  fs = native_findings("Fatal Python error: Segmentation fault\n");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].role == FindingRole::symptom);
  CHECK(fs[0].supports.empty());
  // An abort is no fault: Open MPI's handler naming SIGABRT, PyTorch's deliberate abort, a bare "Aborted".
  CHECK(native_findings(nccl_init +
                        "[node3:405884] *** Process received signal ***\n"
                        "[node3:405884] Signal: Aborted (6)\n")
            .empty());
  CHECK(native_findings(nccl_init +
                        "terminate called after throwing an instance of 'c10::DistBackendError'\n"
                        "Fatal Python error: Aborted\n")
            .empty());
  CHECK(native_findings(nccl_init + "Aborted (core dumped)\n").empty());
  // A crash with NCCL's frame is log.crash_in_nccl, not this.
  CHECK(native_findings(nccl_init +
                        "Segmentation fault (core dumped)\n"
                        "#3  0x00007f1c8a5a7f2a in ncclProxyProgress () from /usr/lib/libnccl.so.2\n")
            .empty());
}
