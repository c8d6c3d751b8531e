// Native stacks of every thread of live processes (docs/stacks.md).
//
// Per process: /proc/PID/task/*/{comm,stat,wchan,syscall} and /proc/PID/maps
// are read BEFORE the stop (syscall shows restart_syscall after any stop), then
// sys/tracee.hpp stops every thread for a few ms, copies registers and stack
// windows and detaches, then collectors/stacks/unwind.hpp unwinds the copy
// offline. Must run in a process that exits afterwards (a probe child): a
// thread in D state that never stopped is released by the tracer's exit.
//
// Failure modes: ptrace denied -> Error whose hint names CAP_SYS_PTRACE, Yama
// ptrace_scope and an existing tracer (TracerPid); not a live host (--root) ->
// Error. Threads that could not be stopped are listed in `problems`.
#pragma once

#include <vector>

#include "ccdiag/result.hpp"
#include "ccdiag/stack_model.hpp"
#include "ccdiag/sysroot.hpp"
#include "sys/tracee.hpp"

namespace ccdiag {

struct StacksOptions {
  bool file_lines = true;
  bool runtime_lines = false;  // file:line for libc/ld.so/libstdc++ frames too (slow: separate debuginfo)
  bool python = true;           // interleave CPython frames (collectors/python/)
  // Per-user symbol cache directory (sys/object_cache.hpp); "" = no cache.
  // Checked again in the capture child: a refused directory means no cache.
  std::string symbol_cache_dir;
  CaptureOptions capture;
};

Result<ProcessStacks> collect_process_stacks(const SysRoot& root, int64_t pid, const StacksOptions& opts);

// "ptrace: EPERM — run as root or with CAP_SYS_PTRACE; yama ptrace_scope=1; TracerPid=42 (gdb)"
std::string ptrace_denied_hint(const SysRoot& root, int64_t pid);

// Human description of a blocked thread from its /proc syscall line:
// "futex wait 0x7f..", "recvfrom fd 5 -> socket:[1234]", "sleep", "running".
std::string describe_blocked(const SysRoot& root, int64_t pid, const std::string& syscall_text,
                             const std::string& wchan);

}  // namespace ccdiag
