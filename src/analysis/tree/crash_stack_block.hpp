// A native crash and the stack printed after it: did the process die inside
// NCCL's own code?
//
// The crash line opens a window of lines in which stack frames are read:
//   "*** SIGSEGV (@0x0) received by PID 2211 (TID 0x7f..) from PID 0; stack trace: ***"   glog / c10
//   "Segmentation fault (core dumped)", "Fatal Python error: Segmentation fault",
//   "free(): corrupted unsorted chunks", "double free or corruption (!prev)"            glibc
// and the frames in the forms those handlers and debuggers print:
//   "    @     0x7f3a9c6f1e3a ncclProxyProgress(void*)"                  glog (absl adds a frame size)
//   "frame #3: ncclProxyProgress + 0x2a (0x7f.. in /usr/lib/libnccl.so.2)"  c10 (PyTorch)
//   "#3  0x00007f.. in ncclProxyProgress () from /usr/lib/libnccl.so.2"  gdb / eu-stack
//   "[host:123] [ 1] /usr/lib/libnccl.so.2(+0x14e63f)[0x7f..]"           backtrace_symbols (Open MPI, UCX)
// libc's signal and abort machinery is skipped; when one of the innermost
// named frames is NCCL's (an nccl* function, or code in libnccl.so) the crash
// happened inside NCCL -> log.crash_in_nccl (in a net plugin's library,
// libnccl-net*.so -> log.crash_in_net_plugin). The kernel's one-line report,
// "python[2211]: segfault at 0 ip .. sp .. error 4 in libnccl.so.2.18.3[..]",
// says the same without a stack.
//
// PyTorch aborting on purpose (its watchdog's "terminate called after
// throwing an instance of 'c10::DistBackendError'") is no crash in NCCL,
// whatever frames follow: that window is dropped.
//
// A fault (SIGSEGV, SIGILL, SIGFPE, glibc's heap checks, Open MPI's
// "Process received signal" unless the signal is an abort) whose stack names
// no NCCL frame, or shows none at all, is still a process dying in native
// code -> log.native_crash. In a log of a process that runs NCCL that is most
// often a defect of NCCL or a library beside it (the threads of the corpus:
// heap corruption on a new platform, a RAS thread racing init); without NCCL
// lines it only says which line killed the process.
//
// Pure and streaming, like PastedBlocks, which holds one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/evidence_set.hpp"

namespace ccdiag {

class CrashStackBlock {
 public:
  // marked: false where the line is known to hold none of kMarkers and not
  // kOpensDeliberate (the caller's literal sieve said so): no window can open.
  void line(std::string_view text, int64_t lineno, bool marked = true);
  // Inside a crash's window: every line may be a frame.
  bool open() const { return window_ > 0; }
  // What opens a window, or is the kernel's report (for the line sieve).
  static constexpr std::string_view kMarkers[] = {
      "SIGSEGV", "Segmentation fault", "SIGABRT", "SIGILL", "SIGFPE", "free(): ", "double free",
      "malloc(): ", "corrupted size", "munmap_chunk(", "segfault at ", "Aborted",
      // Open MPI's handler (its "Signal: ..." line may be cut from a paste).
      "Process received signal"};
  // PyTorch aborting on purpose (for the line sieve too).
  static constexpr std::string_view kDeliberate[] = {"terminate called after throwing", "DistBackendError",
                                                     "ProcessGroupNCCL", "atchdog"};
  // The one of kDeliberate that opens a window of its own.
  static constexpr std::string_view kOpensDeliberate = "terminate called after throwing";
  // nccl_seen: the log holds NCCL's own lines (the process runs NCCL).
  void finish(const std::string& source, const std::string& host, EvidenceSet& set, bool nccl_seen);

 private:
  int window_ = 0;           // lines left in the open window
  bool deliberate_ = false;  // the open window is PyTorch aborting on purpose
  std::string marker_;       // the line that opened it
  int64_t marker_line_ = 0;
  std::vector<std::string> named_;  // the window's named frames so far, innermost first, noise skipped
  struct Hit {
    int64_t lineno;
    std::string text;   // the crash line
    std::string where;  // "ncclProxyProgress <- ncclProxyService" or "libnccl.so.2"
    bool plugin;
    bool framed = false;  // a native fault whose stack named frames (none of them NCCL's)
  };
  std::optional<Hit> pending_;  // the open window's crash in NCCL, kept unless the abort was deliberate
  std::optional<Hit> hit_;      // the first crash in NCCL of the log
  // The open window was opened by a fault (not an abort, not PyTorch's
  // deliberate one): what kind, for the finding's words; empty otherwise.
  std::string fault_kind_;
  std::optional<Hit> native_;   // the first fault of the log with no NCCL frame
  void close_window();
  // Inside an open window: the line as the next frame of the stack.
  void read_frame(std::string_view text);
};

}  // namespace ccdiag
