#include "ccdiag/thread_roles.hpp"

#include <algorithm>
#include <array>

namespace ccdiag {

namespace {

bool has(const std::string& s, std::string_view needle) { return s.find(needle) != std::string::npos; }

bool any_frame(const ThreadStack& t, std::string_view needle) {
  return std::any_of(t.frames.begin(), t.frames.end(),
                     [&](const StackFrame& f) { return has(f.function, needle); });
}

bool starts_with(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

// Frames from the C library, the dynamic loader and the C++ runtime are the
// "how" of blocking, not the "what": skipped when naming the application frame.
bool is_runtime_module(const std::string& m) {
  return starts_with(m, "libc.so") || starts_with(m, "libc-") || starts_with(m, "ld-linux") ||
         starts_with(m, "libpthread") || starts_with(m, "libstdc++") || starts_with(m, "libgcc_s") ||
         starts_with(m, "libm.so") || starts_with(m, "[vdso");
}

// Sanitizer runtimes interpose libc calls (__interceptor_recv) inside the
// application binary itself: they are runtime too.
bool is_runtime_function(const std::string& fn) {
  return starts_with(fn, "__interceptor_") || starts_with(fn, "___interceptor_") || starts_with(fn, "__asan") ||
         starts_with(fn, "__sanitizer") || starts_with(fn, "__ubsan") || starts_with(fn, "__tsan") ||
         starts_with(fn, "__msan");
}

std::string app_frame(const ThreadStack& t) {
  for (const auto& f : t.frames)
    if (!f.function.empty() && !is_runtime_module(f.module) && !is_runtime_function(f.function) &&
        !starts_with(f.module, "libasan") && !starts_with(f.module, "libubsan") && f.function != "main" &&
        f.function != "_start") {
      std::string n = f.function;
      if (const size_t paren = n.find('('); paren != std::string::npos) n.resize(paren);
      return n;
    }
  return "";
}

}  // namespace

std::string thread_role(const ThreadStack& t, int64_t pid) {
  const std::string& n = t.name;
  if (any_frame(t, "ncclProxyProgress") || any_frame(t, "progressOps") || starts_with(n, "NCCL Progress"))
    return "nccl_proxy_progress";
  if (any_frame(t, "ncclProxyService") || any_frame(t, "proxyServiceUDS") || starts_with(n, "NCCL Service") ||
      starts_with(n, "NCCL UDS"))
    return "nccl_proxy_service";
  if (any_frame(t, "rasThreadMain") || starts_with(n, "NCCL RAS")) return "nccl_ras";
  if (any_frame(t, "bootstrapRoot") || starts_with(n, "NCCL Bootstrap")) return "nccl_bootstrap";
  if (any_frame(t, "ncclCommWatchdog") || any_frame(t, "watchdogHandler") || any_frame(t, "Watchdog::run") ||
      n == "pt_nccl_watchdg")
    return "pytorch_watchdog";
  if (any_frame(t, "heartbeatMonitor") || any_frame(t, "HeartbeatMonitor") || n == "pt_nccl_heartbt")
    return "pytorch_heartbeat";
  if (starts_with(n, "pt_data_worker") || any_frame(t, "_worker_loop")) return "dataloader_worker";
  if (starts_with(n, "pt_data_pin") || any_frame(t, "_pin_memory_loop")) return "pin_memory";
  if (t.tid == pid) return "main";
  if (starts_with(n, "cuda-EvtHandlr") || starts_with(n, "cuda0") ||
      std::any_of(t.frames.begin(), t.frames.end(),
                  [](const StackFrame& f) { return starts_with(f.module, "libcuda.so"); }))
    return "cuda_driver";
  if (std::any_of(t.frames.begin(), t.frames.end(), [](const StackFrame& f) { return f.kind == "python"; }))
    return "python";
  return "worker";
}

void assign_roles(ProcessStacks& p) {
  for (auto& t : p.threads) t.role = thread_role(t, p.pid);
  p.activity = rank_activity(p);
}

bool in_collective_or_sync(const ThreadStack& t) {
  for (const auto& f : t.frames) {
    const std::string& fn = f.function;
    if (starts_with(fn, "nccl") || has(fn, "c10d::") || has(fn, "StreamSynchronize") || has(fn, "cuStreamSync") ||
        has(fn, "cudaDeviceSynchronize") || has(fn, "cuCtxSynchronize") || has(fn, "cudaEventSynchronize") ||
        starts_with(f.module, "libnccl"))
      return true;
  }
  return false;
}

std::string thread_activity(const ThreadStack& t) {
  std::string what;
  // Most specific first: the framework call, then the syscall.
  if (any_frame(t, "cudaStreamSynchronize") || any_frame(t, "cuStreamSynchronize"))
    what = "in cudaStreamSynchronize";
  else if (any_frame(t, "cudaDeviceSynchronize")) what = "in cudaDeviceSynchronize";
  else if (any_frame(t, "ncclCommInitRank") && any_frame(t, "bootstrap")) what = "in ncclCommInitRank bootstrap";
  else if (any_frame(t, "ncclCommInitRank")) what = "in ncclCommInitRank";
  else if (any_frame(t, "c10d::") && (any_frame(t, "wait") || any_frame(t, "Wait"))) what = "in a c10d wait";
  else if (any_frame(t, "barrier")) what = "in a barrier";
  else {
    for (const char* op : {"ncclAllReduce", "ncclAllGather", "ncclReduceScatter", "ncclBroadcast", "ncclReduce",
                           "ncclSend", "ncclRecv", "ncclGroupEnd"})
      if (any_frame(t, op)) {
        what = std::string("in ") + op;
        break;
      }
  }
  if (what.empty()) {
    const std::string& sc = t.syscall;
    if (t.capture == "not_stopped" && t.state == "D") what = "in uninterruptible sleep (D, " + t.wchan + ")";
    else if (sc == "recvfrom" || sc == "recvmsg" || sc == "recv") what = "in recv on a socket";
    else if (sc == "read") what = "in read";
    else if (sc == "accept" || sc == "accept4") what = "in accept on a socket";
    else if (sc == "connect") what = "in connect";
    else if (sc == "futex" || sc == "futex_waitv") {
      if (any_frame(t, "pthread_cond") || any_frame(t, "condition_variable")) what = "in a condition-variable wait";
      else if (any_frame(t, "pthread_mutex_lock") || any_frame(t, "__lll_lock_wait")) what = "in a mutex wait (user futex)";
      else if (any_frame(t, "pthread_join") || any_frame(t, "clockjoin")) what = "in pthread_join";
      else what = "in a user futex";
    } else if (sc == "epoll_wait" || sc == "epoll_pwait" || sc == "epoll_pwait2") what = "in epoll_wait";
    else if (sc == "poll" || sc == "ppoll" || sc == "select" || sc == "pselect6") what = "in poll";
    else if (sc == "nanosleep" || sc == "clock_nanosleep") what = "sleeping";
    else if (sc == "restart_syscall") {
      // The kernel restarts an interrupted timed wait (poll, nanosleep, timed
      // futex) as restart_syscall after any stop, ccdiag's own earlier capture
      // included: that stop says nothing about the target. The libc frame
      // says which wait it is.
      if (any_frame(t, "epoll")) what = "in epoll_wait";
      else if (any_frame(t, "poll") || any_frame(t, "select")) what = "in poll";
      else if (any_frame(t, "nanosleep") || any_frame(t, "sleep")) what = "sleeping";
      else if (any_frame(t, "pthread_cond") || any_frame(t, "condition_variable")) what = "in a condition-variable wait";
      else if (any_frame(t, "futex") || any_frame(t, "sem_") || any_frame(t, "lll_lock")) what = "in a user futex";
      else what = "in a timed wait (poll, sleep or futex)";
    }
    else if (sc == "wait4") what = "waiting for a child process";
    else if (sc == "ioctl") what = "in ioctl";
    else if (!sc.empty()) what = "in " + sc;
    else if (t.state == "R") what = "running user code";
    else if (t.state == "Z") what = "exited (zombie)";
    else if (t.state == "T" || t.state == "t") what = "stopped";
    else what = "in user code";
  }
  // A Python rank: its innermost Python frame says more than any native one
  // ("in a user futex at train.py:212 in Trainer.evaluate").
  for (const auto& f : t.frames)
    if (f.kind == "python") {
      std::string file = f.file.value_or("?");
      if (const size_t s = file.rfind('/'); s != std::string::npos) file = file.substr(s + 1);
      // Blocked in a native wait under torch.distributed's own call: a c10d
      // wait, however much of the native stack the unwinder recovered (ranks
      // in one all_reduce must not split into "c10d wait" and "user futex"
      // because one stack lost its c10d:: frames).
      const bool blocked = what == "in a user futex" || what == "in a condition-variable wait" ||
                           what == "in a timed wait (poll, sleep or futex)" || what == "in poll" ||
                           what == "in epoll_wait" || what == "in recv on a socket";
      if (blocked && file == "distributed_c10d.py") what = "in a c10d wait";
      return what + " at " + file + ":" + (f.line ? std::to_string(*f.line) : "???") + " in " + f.function;
    }
  const std::string app = app_frame(t);
  if (!app.empty() && what.find(app) == std::string::npos) what += " (under " + app + ")";
  return what;
}

std::string rank_activity(const ProcessStacks& p) {
  const ThreadStack* main = nullptr;
  for (const auto& t : p.threads)
    if (t.tid == p.pid) main = &t;
  // Zombie leader (main called pthread_exit): describe the first live thread.
  if (!main || main->state == "Z") {
    for (const auto& t : p.threads)
      if (t.state != "Z") {
        main = &t;
        break;
      }
  }
  if (!main) return "no threads";
  return thread_activity(*main);
}

}  // namespace ccdiag
