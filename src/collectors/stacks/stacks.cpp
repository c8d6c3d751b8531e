#include "collectors/stacks/stacks.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "ccdiag/thread_roles.hpp"
#include "collectors/proc/proc_parse.hpp"
#include "collectors/python/python_stacks.hpp"
#include "collectors/stacks/object_symbols.hpp"
#include "collectors/stacks/unwind.hpp"
#include "sys/memory_reader.hpp"

namespace ccdiag {

namespace {

// /proc/PID/task/TID opened once; its small files read relative to it.
class TaskDir {
 public:
  explicit TaskDir(const std::string& path) : fd_(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)) {}
  ~TaskDir() {
    if (fd_ >= 0) ::close(fd_);
  }
  TaskDir(const TaskDir&) = delete;
  TaskDir& operator=(const TaskDir&) = delete;
  // The whole file (procfs: up to 64 KiB), "" when it cannot be read.
  std::string text(const char* name) const {
    std::string out;
    const int fd = fd_ < 0 ? -1 : ::openat(fd_, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return out;
    char buf[4096];
    while (out.size() < 64 * 1024) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
      // procfs hands a small file over in one read: a short read is its end
      // (saves the read that would return 0, 400 syscalls for 100 threads).
      if (static_cast<size_t>(n) < sizeof buf) break;
    }
    ::close(fd);
    return out;
  }
  // The first line, as SysRoot::read_line.
  std::string line(const char* name) const {
    std::string s = text(name);
    if (auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
    return s;
  }

 private:
  int fd_;
};

std::vector<pid_t> list_tids(const SysRoot& root, int64_t pid) {
  std::vector<pid_t> out;
  auto names = root.list_dir("/proc/" + std::to_string(pid) + "/task");
  if (!names) return out;
  for (const auto& n : *names)
    if (!n.empty() && n.find_first_not_of("0123456789") == std::string::npos) out.push_back(std::stoi(n));
  return out;
}

}  // namespace

std::string ptrace_denied_hint(const SysRoot& root, int64_t pid) {
  std::vector<std::string> parts;
  if (::geteuid() != 0) parts.push_back("run as root or with CAP_SYS_PTRACE");
  if (auto y = root.read_line("/proc/sys/kernel/yama/ptrace_scope")) {
    parts.push_back("yama ptrace_scope=" + *y);
    if (*y == "3") parts.push_back("scope 3 forbids all attaching until reboot");
  }
  if (auto st = root.read_file("/proc/" + std::to_string(pid) + "/status", 64 * 1024)) {
    const auto kv = parse_status(*st);
    if (auto tp = status_value(kv, "TracerPid"); tp && *tp != "0") {
      const std::string comm = root.read_line("/proc/" + *tp + "/comm").value_or("?");
      parts.push_back("already traced by pid " + *tp + " (" + comm + "): detach it first");
    }
  }
  if (parts.empty()) parts.push_back("the process may be non-dumpable or protected by an LSM");
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

std::string describe_blocked(const SysRoot& root, int64_t pid, const std::string& syscall_text,
                             const std::string& wchan) {
  auto sc = parse_syscall_line(syscall_text);
  if (!sc) return wchan.empty() ? "" : "in kernel " + wchan;
  if (sc->running) return "running";
  if (sc->nr < 0) return "blocked outside a syscall";
  const std::string name = syscall_name(sc->nr);
  auto fd_target = [&](uint64_t fd) {
    return root.read_link("/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd)).value_or("?");
  };
  if (name == "futex") {
    const uint64_t op = sc->args[1] & 0x7f;  // drop FUTEX_PRIVATE_FLAG (128)
    const bool timeout = sc->args[3] != 0;
    const char* kind = op == 0 || op == 9 ? "futex wait" : op == 6 ? "futex lock_pi" : "futex";
    return fmt::format("{} 0x{:x}{}", kind, sc->args[0], timeout ? " (timeout)" : "");
  }
  if (name == "read" || name == "recvfrom" || name == "recvmsg" || name == "accept" || name == "accept4" ||
      name == "connect")
    return fmt::format("{} fd {} -> {}", name, sc->args[0], fd_target(sc->args[0]));
  if (name == "epoll_wait" || name == "epoll_pwait")
    return fmt::format("{} epfd {} timeout {}", name, sc->args[0], static_cast<int64_t>(sc->args[3]));
  if (name == "nanosleep" || name == "clock_nanosleep") return "sleep";
  // The kernel's restart of a timed wait (nanosleep, poll, timed futex) after
  // any stop, also ccdiag's own earlier one: the wait, not the stop, is the state.
  if (name == "restart_syscall") return "timed wait (nanosleep/poll/timed futex)";
  if (name.empty()) return fmt::format("syscall {}", sc->nr);
  return name;
}

namespace {

// What /proc says of one thread before the stop.
struct PreStop {
  ThreadStack thread;
  char state = '?';
  uint64_t sp_hint = 0;  // a blocked thread's sp: it sizes the copy buffer
};

PreStop read_pre_stop(const SysRoot& root, int64_t pid, const std::string& dir, pid_t tid) {
  PreStop out;
  ThreadStack& t = out.thread;
  // One directory fd per thread and openat for its files: no path walk from
  // / per file (100 threads read 400 of them before the stop).
  const TaskDir task(root.path(dir + "/task/" + std::to_string(tid)));
  t.tid = tid;
  // stat carries the same comm as the comm file (both unescaped, 15
  // bytes): one open per thread fewer. Cut at a newline as read_line on
  // the comm file would.
  char state = '?';
  if (auto st = parse_proc_stat(task.text("stat"))) {
    state = st->state;
    t.name = st->comm.substr(0, st->comm.find('\n'));
  } else {
    t.name = task.line("comm");
  }
  t.state = std::string(1, state);
  t.wchan = task.line("wchan");
  if (t.wchan == "0") t.wchan.clear();
  const std::string sc = task.line("syscall");
  if (auto p = parse_syscall_line(sc); p && !p->running) {
    // A blocked thread's sp stays put across the stop.
    out.sp_hint = p->sp;
    if (p->nr >= 0) {
      t.syscall_nr = p->nr;
      t.syscall = syscall_name(p->nr);
    }
  }
  t.blocked_in = describe_blocked(root, pid, sc, t.wchan);
  // A D thread will not stop for ptrace: its kernel stack is the evidence
  // (driver ioctl, NFS/FUSE I/O). Readable by root only; absent otherwise.
  if (state == 'D') t.kernel_stack = parse_kernel_stack(task.text("stack"));
  if (state == 'D' && !t.kernel_stack.empty()) t.blocked_in = "D in " + t.kernel_stack.front();
  out.state = state;
  return out;
}

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return 1;
}

}  // namespace

Result<ProcessStacks> collect_process_stacks(const SysRoot& root, int64_t pid, const StacksOptions& opts) {
  if (!root.is_live())
    return make_error("stacks need a live host (not available under --root)", "pid " + std::to_string(pid));
  const auto t_begin = std::chrono::steady_clock::now();
  const std::string dir = "/proc/" + std::to_string(pid);
  auto stat_text = root.read_line(dir + "/stat");
  if (!stat_text) return make_error("no such process", "pid " + std::to_string(pid));
  ProcessStacks ps;
  ps.pid = pid;
  if (auto st = parse_proc_stat(*stat_text)) ps.comm = st->comm;

  // 1. Everything /proc says, before the stop.
  CaptureInput in;
  in.pid = static_cast<pid_t>(pid);
  pid_t live_tid = 0;
  const std::vector<pid_t> tids = list_tids(root, pid);
  std::vector<PreStop> pre(tids.size());
  auto read_range = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) pre[i] = read_pre_stop(root, pid, dir, tids[i]);
  };
  // ~30 us of /proc reads per thread: a rank's hundred-odd threads are read
  // on two cores where there are two (the target is not stopped yet, so this
  // is the tool's own time, not the pause).
  if (tids.size() >= 32 && usable_cpus() >= 2) {
    std::thread other(read_range, tids.size() / 2, tids.size());
    read_range(0, tids.size() / 2);
    other.join();
  } else {
    read_range(0, tids.size());
  }
  for (size_t i = 0; i < tids.size(); ++i) {
    const pid_t tid = tids[i];
    const char state = pre[i].state;
    // The leader is the most stable address-space handle; another thread only
    // when the leader is a zombie (its /proc maps are empty, it has no mm).
    if (state != 'Z' && state != 'X' && (!live_tid || tid == pid)) live_tid = tid;
    in.tids.push_back(tid);
    in.states.push_back(state);
    in.sp_hints.push_back(pre[i].sp_hint);
    ps.threads.push_back(std::move(pre[i].thread));
  }
  if (ps.threads.empty()) return make_error("no threads listed", dir + "/task");
  if (!live_tid)
    return make_error("every thread is a zombie: nothing to capture", "pid " + std::to_string(pid));
  // With a zombie leader the pid has no mm: read maps through a live thread.
  const std::string maps_path = dir + "/task/" + std::to_string(live_tid) + "/maps";
  if (auto maps = root.read_file(maps_path, 16 << 20))
    for (const auto& m : parse_maps(*maps)) in.mappings.push_back(AddressRange{m.start, m.end});
  in.list_tids = [&root, pid] { return list_tids(root, pid); };

  // 2. The stop window.
  auto cap = capture_process(in, opts.capture);
  if (!cap) {
    Error e = cap.error();
    if (e.message.find("Operation not permitted") != std::string::npos)
      e.hint = ptrace_denied_hint(root, pid);
    if (e.message.find("No such process") != std::string::npos)
      e.message = "process exited before the capture";
    return e;
  }
  ps.pause_ms = cap->pause_ms;
  if (cap->exec_during_capture)
    ps.problems.push_back("process called execve during the capture: stacks discarded");
  if (cap->copy_budget_exceeded)
    ps.problems.push_back("copy budget exceeded: some stacks are registers only");

  // 3. Unwind offline from the copy.
  std::vector<UnwindThread> uthreads;
  BufferMemoryReader memory;
  for (auto& c : cap->threads) {
    if (!c.have_regs || cap->exec_during_capture) continue;
    uthreads.push_back(UnwindThread{c.tid, c.regs});
    if (!c.window.empty()) memory.add(c.window_base, std::move(c.window));
  }
  std::string perr;
  UnwindOptions uo;
  uo.file_lines = opts.file_lines;
  uo.runtime_lines = opts.runtime_lines;
  std::optional<ObjectCache> symbol_cache;
  if (!opts.symbol_cache_dir.empty())
    if (auto c = ObjectCache::open(opts.symbol_cache_dir)) symbol_cache.emplace(std::move(*c));
  uo.cache = symbol_cache ? &*symbol_cache : nullptr;
  std::map<pid_t, UnwindResult> unwound;
  if (!uthreads.empty()) {
    unwound = unwind_threads(live_tid, uthreads, memory, uo, &perr);
    // The thread we read maps through may have exited meanwhile (thread
    // churn): retry through a thread that was just stopped.
    for (size_t i = 0; unwound.empty() && i < uthreads.size() && i < 4; ++i) {
      if (uthreads[i].tid == live_tid) continue;
      perr.clear();
      unwound = unwind_threads(uthreads[i].tid, uthreads, memory, uo, &perr);
    }
  }
  if (!perr.empty()) ps.problems.push_back("unwinding: " + perr);

  // 4. Merge.
  std::map<pid_t, const ThreadCapture*> by_tid;
  for (const auto& c : cap->threads) by_tid[c.tid] = &c;
  for (const auto& c : cap->threads) {
    // Threads that appeared during the capture are not in the /proc listing.
    if (std::none_of(ps.threads.begin(), ps.threads.end(),
                     [&](const ThreadStack& t) { return t.tid == c.tid; })) {
      ThreadStack t;
      t.tid = c.tid;
      t.name = root.read_line(dir + "/task/" + std::to_string(c.tid) + "/comm").value_or("");
      t.state = "?";
      t.blocked_in = "started during the capture";
      ps.threads.push_back(std::move(t));
    }
  }
  for (auto& t : ps.threads) {
    auto it = by_tid.find(static_cast<pid_t>(t.tid));
    if (it == by_tid.end()) continue;
    const ThreadCapture& c = *it->second;
    t.capture = std::string(to_string(c.state));
    if (c.state == ThreadCaptureState::not_stopped)
      ps.problems.push_back(fmt::format("thread {} not stopped ({}{}{})", t.tid, t.state,
                                        t.wchan.empty() ? "" : ", ", t.wchan));
    if (c.state == ThreadCaptureState::seize_failed && t.state != "Z")
      ps.problems.push_back(fmt::format("thread {}: ptrace seize: {}", t.tid, std::strerror(c.seize_errno)));
    if (auto u = unwound.find(c.tid); u != unwound.end()) {
      t.frames = std::move(u->second.frames);
      t.unwind_error = u->second.error;
      // A thread caught at the very start of its life, on its new stack in
      // clone/clone3: nothing above it to unwind yet.
      if (!t.unwind_error.empty() && !t.frames.empty() && t.frames.size() <= 3 &&
          t.frames[0].function.find("clone") != std::string::npos) {
        t.frames.resize(1);
        t.unwind_error = "thread starting (caught in " + t.frames[0].function + ")";
      }
    }
  }
  // 5. Python frames (after the stop: a stuck rank's Python state is stable).
  if (opts.python && !cap->exec_during_capture) python::add_python_frames(root, ps);
  std::sort(ps.threads.begin(), ps.threads.end(),
            [](const ThreadStack& a, const ThreadStack& b) { return a.tid < b.tid; });
  assign_roles(ps);
  ps.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_begin).count();
  return ps;
}

}  // namespace ccdiag
