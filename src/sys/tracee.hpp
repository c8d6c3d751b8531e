// Tracee: stop every thread of a live process for a few milliseconds, copy its
// registers and the top of its stack, and let it go (docs/stacks.md). The only
// ptrace user in ccdiag.
//
// Discipline (each point has a live test in tests/live/test_stacks_safety.py):
//   - PTRACE_SEIZE + PTRACE_INTERRUPT, never PTRACE_ATTACH: no SIGSTOP is ever
//     queued, so a tracer that dies at any moment leaves nothing stopped (the
//     kernel's exit_ptrace drops pending INTERRUPT traps).
//   - Options: PTRACE_O_TRACEEXEC only. Never EXITKILL (would kill the target
//     with us), never SUSPEND_SECCOMP. Nothing is ever written into the target
//     (no POKE, no SETREGS); the only signal handed back is one the thread was
//     already receiving when it stopped (signal-delivery-stop).
//   - Every wait is bounded: `stop_deadline` overall, and threads that were in
//     D state (uninterruptible sleep) before the stop only get `d_grace` after
//     everyone else stopped. They are reported as not stopped; they cannot be
//     detached (PTRACE_DETACH needs a ptrace-stop), so the process that ran the
//     capture MUST exit soon after: the kernel then detaches them. ccdiag runs
//     captures in a forked child (sys/probe_runner.hpp) for that reason.
//   - TraceeSet's destructor detaches every thread that is in a ptrace-stop, on
//     every path out (errors, exceptions).
//   - Only the thread that seized a tracee may issue ptrace requests for it:
//     call capture_process() from one thread, start to end.
//
// Costs (100 threads, 2 vCPUs): pause ~5 ms; see bench/stacks.
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ccdiag/result.hpp"

namespace ccdiag {

// Registers in DWARF numbering, ready for the unwinder.
// x86_64: 0 rax,1 rdx,2 rcx,3 rbx,4 rsi,5 rdi,6 rbp,7 rsp,8-15 r8-r15,16 rip (17 values).
// aarch64: 0-30 x0-x30, 31 sp (32 values); pc separately.
struct RegisterSnapshot {
  std::array<uint64_t, 33> dwarf{};
  unsigned count = 0;     // valid entries in `dwarf`
  uint64_t pc = 0;
  uint64_t sp = 0;
  int64_t syscall_nr = -1;   // x86_64 orig_rax at the stop; -1 when not in a syscall / unknown
  int64_t syscall_ret = 0;   // rax: -512 ERESTARTSYS etc. when the stop interrupted a syscall
  uint64_t thread_pointer = 0;  // x86_64 fs_base (glibc: the thread's pthread_t); 0 elsewhere
};

enum class ThreadCaptureState {
  stopped,        // registers (and a stack window) copied, then detached
  not_stopped,    // seized but did not reach a ptrace-stop in time (D state); no registers
  exited,         // vanished between listing and the copy
  seize_failed,   // PTRACE_SEIZE refused (errno in seize_errno)
};
std::string_view to_string(ThreadCaptureState s);

struct ThreadCapture {
  pid_t tid = 0;
  char state_before = '?';   // /proc state letter read before the stop (caller fills it)
  ThreadCaptureState state = ThreadCaptureState::seize_failed;
  int seize_errno = 0;
  int stop_signal = 0;       // WSTOPSIG of the stop
  int ptrace_event = 0;      // status >> 16 (128 = PTRACE_EVENT_STOP)
  int injected_signal = 0;   // signal handed back at detach (signal-delivery-stop only)
  bool have_regs = false;
  RegisterSnapshot regs;
  uint64_t window_base = 0;  // remote address of window[0]
  std::vector<uint8_t> window;  // copy of [sp - redzone, ...) clipped to the stack mapping
};

struct AddressRange {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
};

struct CaptureInput {
  pid_t pid = 0;
  std::vector<pid_t> tids;               // listed before the stop
  std::vector<char> states;              // /proc state letter per tid ('D' gets the short grace)
  std::vector<AddressRange> mappings;    // /proc/PID/maps ranges, to clip stack windows
  // Per tid, the sp /proc/TID/syscall showed before the stop (0: unknown, e.g.
  // running): sizes each copy buffer to what the window will really hold, so
  // that 100 threads do not pre-fault 6.5 MB of 64 KiB buffers they never fill.
  std::vector<uint64_t> sp_hints;
  // Re-lists the threads (for threads created during the capture); may be empty.
  std::function<std::vector<pid_t>()> list_tids;
};

struct CaptureOptions {
  std::chrono::microseconds stop_deadline{200'000};  // from the first INTERRUPT, absolute
  std::chrono::microseconds d_grace{5'000};          // extra wait for threads that were in D
  std::chrono::microseconds copy_budget{50'000};     // stop copying windows after this
  size_t window_bytes = 64 * 1024;                   // per thread, from sp upwards
  // Raise SIGKILL on ourselves at this phase ("seized", "interrupted",
  // "stopped", "copied", "detaching"): set only by the test driver
  // tests/drivers/capture_kill_driver.cpp to prove the target survives a
  // killed tool; nothing in the ccdiag binary sets it.
  std::string kill_self_at;
};

struct ProcessCapture {
  pid_t pid = 0;
  std::vector<ThreadCapture> threads;
  double pause_ms = 0;        // first PTRACE_INTERRUPT -> last PTRACE_DETACH
  int rescans = 0;            // passes that found threads created during the capture
  int vanished = 0;           // tids gone between listing and stop
  bool exec_during_capture = false;
  bool copy_budget_exceeded = false;
};

// Captures every thread of `in.pid`. Fails (no thread seized) with an error
// whose hint names the cause: EPERM -> CAP_SYS_PTRACE / Yama / existing tracer,
// ESRCH -> process gone. Partial results (some threads not stopped) are ok.
Result<ProcessCapture> capture_process(const CaptureInput& in, const CaptureOptions& opts);

// RAII set of seized threads: the destructor detaches every thread still in a
// ptrace-stop. Exposed for tests; capture_process uses it internally.
class TraceeSet {
 public:
  TraceeSet() = default;
  TraceeSet(const TraceeSet&) = delete;
  TraceeSet& operator=(const TraceeSet&) = delete;
  ~TraceeSet() { detach_all(); }

  // PTRACE_SEIZE with PTRACE_O_TRACEEXEC; returns 0 or errno.
  int seize(pid_t tid);
  // PTRACE_INTERRUPT; returns 0 or errno.
  int interrupt(pid_t tid);
  void mark_stopped(pid_t tid, int inject_signal);
  void mark_gone(pid_t tid);
  // Detaches one stopped thread (injecting its pending signal); returns 0 or errno.
  int detach(pid_t tid);
  // Detaches all stopped threads; returns how many were detached.
  int detach_all();
  bool is_stopped(pid_t tid) const;

 private:
  struct Entry {
    pid_t tid;
    bool stopped = false;
    bool gone = false;
    int inject = 0;
  };
  Entry* find(pid_t tid);
  const Entry* find(pid_t tid) const;
  std::vector<Entry> entries_;
};

}  // namespace ccdiag
