#include "sys/tracee.hpp"

#include <elf.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "sys/memory_reader.hpp"

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

namespace ccdiag {

std::string_view to_string(ThreadCaptureState s) {
  switch (s) {
    case ThreadCaptureState::stopped: return "stopped";
    case ThreadCaptureState::not_stopped: return "not_stopped";
    case ThreadCaptureState::exited: return "exited";
    case ThreadCaptureState::seize_failed: return "seize_failed";
  }
  return "?";
}

// ---------------------------------------------------------------- TraceeSet

TraceeSet::Entry* TraceeSet::find(pid_t tid) {
  for (auto& e : entries_)
    if (e.tid == tid) return &e;
  return nullptr;
}
const TraceeSet::Entry* TraceeSet::find(pid_t tid) const {
  for (const auto& e : entries_)
    if (e.tid == tid) return &e;
  return nullptr;
}

int TraceeSet::seize(pid_t tid) {
  // TRACEEXEC only: an execve by any thread then shows up as an event instead
  // of silently replacing the image under us. No EXITKILL, ever.
  if (::ptrace(PTRACE_SEIZE, tid, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACEEXEC)) != 0) return errno;
  entries_.push_back(Entry{tid});
  return 0;
}

int TraceeSet::interrupt(pid_t tid) {
  return ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) == 0 ? 0 : errno;
}

void TraceeSet::mark_stopped(pid_t tid, int inject_signal) {
  if (auto* e = find(tid)) {
    e->stopped = true;
    e->inject = inject_signal;
  }
}

void TraceeSet::mark_gone(pid_t tid) {
  if (auto* e = find(tid)) {
    e->gone = true;
    e->stopped = false;
  }
}

bool TraceeSet::is_stopped(pid_t tid) const {
  const auto* e = find(tid);
  return e && e->stopped;
}

int TraceeSet::detach(pid_t tid) {
  auto* e = find(tid);
  if (!e || !e->stopped) return ESRCH;
  // `data` is a signal only meaningful from a signal-delivery-stop: it hands
  // back the signal the thread was receiving; for PTRACE_EVENT_STOP it is 0.
  const long rc = ::ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(static_cast<long>(e->inject)));
  e->stopped = false;
  return rc == 0 ? 0 : errno;
}

int TraceeSet::detach_all() {
  int n = 0;
  for (auto& e : entries_)
    if (e.stopped && detach(e.tid) == 0) ++n;
  return n;
}

// ---------------------------------------------------------------- capture

namespace {

using Clock = std::chrono::steady_clock;

void maybe_die(const CaptureOptions& o, const char* phase) {
  // Test hook only (docs/stacks.md "safety"): simulates the tool being
  // SIGKILLed at a precise phase of the capture.
  if (!o.kill_self_at.empty() && o.kill_self_at == phase) ::kill(::getpid(), SIGKILL);
}

bool read_registers(pid_t tid, RegisterSnapshot& r) {
#if defined(__x86_64__)
  user_regs_struct u{};
  iovec io{&u, sizeof u};
  if (::ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(NT_PRSTATUS), &io) != 0) return false;
  // A 32-bit compat task returns a shorter set: not supported, report no regs.
  if (io.iov_len != sizeof u) return false;
  const uint64_t v[17] = {u.rax, u.rdx, u.rcx, u.rbx, u.rsi, u.rdi, u.rbp, u.rsp, u.r8,
                          u.r9,  u.r10, u.r11, u.r12, u.r13, u.r14, u.r15, u.rip};
  std::copy(std::begin(v), std::end(v), r.dwarf.begin());
  r.count = 17;
  r.pc = u.rip;
  r.sp = u.rsp;
  r.syscall_nr = static_cast<int64_t>(u.orig_rax);
  r.syscall_ret = static_cast<int64_t>(u.rax);
  r.thread_pointer = u.fs_base;
  return true;
#elif defined(__aarch64__)
  user_pt_regs u{};
  iovec io{&u, sizeof u};
  if (::ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(NT_PRSTATUS), &io) != 0) return false;
  for (int i = 0; i < 31; ++i) r.dwarf[i] = u.regs[i];
  r.dwarf[31] = u.sp;
  r.count = 32;
  r.pc = u.pc;
  r.sp = u.sp;
  r.syscall_nr = -1;
  r.syscall_ret = static_cast<int64_t>(u.regs[0]);
  return true;
#else
  (void)tid;
  (void)r;
  return false;
#endif
}

#if defined(__x86_64__)
constexpr uint64_t kRedZone = 128;  // SysV x86_64: leaf functions use 128 bytes below rsp
#else
constexpr uint64_t kRedZone = 0;
#endif

struct Waiter {
  sigset_t chld;
  Waiter() {
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
  }
  // Sleeps until a SIGCHLD (a ptrace stop notifies the tracer with one) or `max`.
  void nap(std::chrono::microseconds max) const {
    if (max.count() <= 0) return;
    max = std::min(max, std::chrono::microseconds(1000));
    timespec ts{0, static_cast<long>(max.count()) * 1000};
    ::sigtimedwait(&chld, nullptr, &ts);
  }
};

// Blocks the signals that would interrupt the stop window (design: they act
// right after the detach) and SIGCHLD (consumed with sigtimedwait). Restores
// the mask on scope exit.
class SignalBlock {
 public:
  SignalBlock() {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) sigaddset(&s, sig);
    ::pthread_sigmask(SIG_BLOCK, &s, &old_);
  }
  ~SignalBlock() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

}  // namespace

Result<ProcessCapture> capture_process(const CaptureInput& in, const CaptureOptions& opts) {
  ProcessCapture cap;
  cap.pid = in.pid;
  std::unordered_map<pid_t, size_t> index;
  // [sp - red zone, sp + window) clipped to the mapping that holds sp.
  auto window_of = [&](uint64_t sp) {
    const uint64_t lo = sp > kRedZone ? sp - kRedZone : 0;
    uint64_t hi = lo + opts.window_bytes + kRedZone;
    for (const auto& m : in.mappings)
      if (m.start <= sp && sp < m.end) {
        hi = std::min(hi, m.end);
        break;
      }
    return AddressRange{lo, hi};
  };
  std::vector<size_t> prefault;  // bytes per thread to touch before the stop
  auto add_thread = [&](pid_t tid, char state, uint64_t sp_hint) {
    ThreadCapture t;
    t.tid = tid;
    t.state_before = state;
    // The whole window when sp is unknown; else what it will hold, plus a
    // page of slack for a thread that moved a little before it stopped.
    size_t want = opts.window_bytes + kRedZone;
    if (sp_hint) {
      const AddressRange w = window_of(sp_hint);
      want = std::min<size_t>(want, static_cast<size_t>(w.end - w.start) + 4096);
    }
    t.window.reserve(want);
    prefault.push_back(want);
    index[tid] = cap.threads.size();
    cap.threads.push_back(std::move(t));
  };
  for (size_t i = 0; i < in.tids.size(); ++i)
    add_thread(in.tids[i], i < in.states.size() ? in.states[i] : '?', i < in.sp_hints.size() ? in.sp_hints[i] : 0);
  // Pre-pay the page faults of the copy buffers before anything stops
  // (a fault costs ~13 us on a VM; 100 windows would double the pause).
  for (size_t i = 0; i < cap.threads.size(); ++i) {
    cap.threads[i].window.resize(prefault[i]);
    cap.threads[i].window.clear();
  }

  SignalBlock block;
  Waiter waiter;
  TraceeSet set;

  // 1. SEIZE everyone: no stop yet.
  int first_errno = 0;
  int seized = 0;
  for (auto& t : cap.threads) {
    const int err = set.seize(t.tid);
    if (err == 0) {
      ++seized;
      t.state = ThreadCaptureState::not_stopped;
    } else {
      t.seize_errno = err;
      // ESRCH: gone; EPERM on an exiting thread or a zombie leader.
      t.state = err == ESRCH ? ThreadCaptureState::exited : ThreadCaptureState::seize_failed;
      if (err == ESRCH) ++cap.vanished;
      if (!first_errno && err != ESRCH) first_errno = err;
    }
  }
  if (seized == 0) {
    const int err = first_errno ? first_errno : ESRCH;
    return make_error(std::string("ptrace seize: ") + std::strerror(err), "pid " + std::to_string(in.pid));
  }
  maybe_die(opts, "seized");

  // 2. INTERRUPT in a tight loop so the stops cluster.
  const auto t0 = Clock::now();
  const auto abs_deadline = t0 + opts.stop_deadline;
  for (auto& t : cap.threads)
    if (t.state == ThreadCaptureState::not_stopped && set.interrupt(t.tid) == ESRCH) {
      t.state = ThreadCaptureState::exited;
      set.mark_gone(t.tid);
      ++cap.vanished;
    }
  maybe_die(opts, "interrupted");

  // 3. Wait for the stops, bounded.
  auto wait_stops = [&]() {
    std::optional<Clock::time_point> others_done;
    while (true) {
      bool pending_normal = false, pending_d = false;
      for (auto& t : cap.threads) {
        if (t.state != ThreadCaptureState::not_stopped) continue;
        int st = 0;
        const pid_t w = ::waitpid(t.tid, &st, __WALL | WNOHANG);
        if (w == t.tid) {
          if (WIFEXITED(st) || WIFSIGNALED(st)) {
            t.state = ThreadCaptureState::exited;
            set.mark_gone(t.tid);
            ++cap.vanished;
            continue;
          }
          if (WIFSTOPPED(st)) {
            const int ev = st >> 16;
            t.ptrace_event = ev;
            t.stop_signal = WSTOPSIG(st);
            if (ev == PTRACE_EVENT_EXEC) cap.exec_during_capture = true;
            // A signal-delivery-stop (ev == 0) carries a real signal the thread
            // was receiving: hand it back at detach. Never inject otherwise.
            const int inject = ev == 0 ? t.stop_signal : 0;
            t.injected_signal = inject;
            t.state = ThreadCaptureState::stopped;
            set.mark_stopped(t.tid, inject);
            continue;
          }
        } else if (w < 0 && errno == ECHILD) {
          t.state = ThreadCaptureState::exited;
          set.mark_gone(t.tid);
          continue;
        }
        (t.state_before == 'D' ? pending_d : pending_normal) = true;
      }
      const auto now = Clock::now();
      if (!pending_normal && !pending_d) return;
      if (now >= abs_deadline) return;
      if (!pending_normal) {
        // Only D-state threads left: they stop when they leave the
        // uninterruptible sleep, which may be never. Short grace, then go.
        if (!others_done) others_done = now;
        if (now - *others_done >= opts.d_grace) return;
      }
      const auto left = std::chrono::duration_cast<std::chrono::microseconds>(abs_deadline - now);
      waiter.nap(left);
    }
  };
  wait_stops();

  // 4. Threads created meanwhile: a stopped thread cannot clone, so the set
  // converges; seize and stop the newcomers until a pass finds nothing new.
  if (in.list_tids) {
    for (int pass = 0; pass < 8 && Clock::now() < abs_deadline; ++pass) {
      bool added = false;
      for (pid_t tid : in.list_tids()) {
        if (index.count(tid)) continue;
        add_thread(tid, '?', 0);
        auto& t = cap.threads.back();
        const int err = set.seize(tid);
        if (err != 0) {
          t.seize_errno = err;
          t.state = err == ESRCH ? ThreadCaptureState::exited : ThreadCaptureState::seize_failed;
          continue;
        }
        t.state = ThreadCaptureState::not_stopped;
        set.interrupt(tid);
        added = true;
      }
      if (!added) break;
      ++cap.rescans;
      wait_stops();
    }
  }
  maybe_die(opts, "stopped");

  // 5. Copy registers and stack windows while everything is stopped.
  const auto copy_start = Clock::now();
  for (auto& t : cap.threads) {
    if (t.state != ThreadCaptureState::stopped) continue;
    if (!read_registers(t.tid, t.regs)) continue;
    t.have_regs = true;
    if (Clock::now() - copy_start > opts.copy_budget) {
      cap.copy_budget_exceeded = true;
      continue;  // registers only: the unwinder reports a one-frame stack
    }
    const AddressRange w = window_of(t.regs.sp);
    const uint64_t lo = w.start;
    // Past the reserved size only when sp moved since /proc showed it: the
    // growth then faults inside the pause, which is the old cost, bounded.
    t.window.resize(w.end - w.start);
    // Read through this thread's tid: with a zombie leader, the pid has no mm.
    const size_t n = LiveMemoryReader(t.tid).read(lo, t.window.data(), t.window.size());
    t.window.resize(n);
    t.window_base = lo;
  }
  maybe_die(opts, "copied");

  // 6. Release everyone.
  maybe_die(opts, "detaching");
  set.detach_all();
  const auto t1 = Clock::now();
  cap.pause_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  return cap;
}

}  // namespace ccdiag
