// Offline unwinding of a register + stack-window snapshot with elfutils
// libdwfl, and symbolisation (docs/stacks.md).
//
// Two Dwfl sessions per process, on purpose (libdw 0.188 traps):
//   - unwinding: CFI from .eh_frame (and .debug_frame in the main file) with
//     separate debuginfo disabled — a CFI miss would otherwise load a whole
//     libc debuginfo (120-155 ms) — and libdwfl's frame-pointer fallback;
//   - symbolisation: local build-id debuginfo only (/usr/lib/debug), never
//     debuginfod (DEBUGINFOD_URLS is never consulted: no network).
// Target memory is read only from the snapshot (MemoryReader): the live
// process is not touched after the detach, except to open its mapped ELF
// files, which go through /proc/PID/root with openat2(RESOLVE_IN_ROOT) so a
// container cannot point us at a host file.
//
// Limits: 256 frames per thread; a stack that runs off the snapshot ends with
// unwind_error "stack window exhausted".
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "ccdiag/stack_model.hpp"
#include "sys/memory_reader.hpp"
#include "sys/object_cache.hpp"
#include "sys/tracee.hpp"

namespace ccdiag {

struct SymbolCacheStats;

struct UnwindThread {
  pid_t tid = 0;
  RegisterSnapshot regs;
};

struct UnwindResult {
  std::vector<StackFrame> frames;
  std::string error;  // "" when the walk ended at an undefined return address
};

struct UnwindOptions {
  bool file_lines = true;     // dwfl_module_getsrc for file:line
  // Also for the C/C++ runtime (libc, ld.so, libstdc++, libgcc_s, libpthread).
  // Off by default: their line tables come from separate debuginfo (libc's
  // first load is ~80 ms) and "futex-internal.c:57" helps nobody.
  bool runtime_lines = false;
  unsigned max_frames = 256;
  // Symbol index and file:line memo per build-id (object_symbols.hpp); null:
  // built in memory for this run only.
  const ObjectCache* cache = nullptr;
  struct SymbolCacheStats* cache_stats = nullptr;  // counts, for tests and the bench; may be null
};

// `pid` names the address space for module reporting (/proc/<pid>/maps and
// auxv) and for opening mapped files; give a live tid when the leader is a
// zombie. `memory` serves every stack read.
std::map<pid_t, UnwindResult> unwind_threads(pid_t pid, const std::vector<UnwindThread>& threads,
                                             const MemoryReader& memory, const UnwindOptions& opts,
                                             std::string* process_error = nullptr);

// "_ZN3foo3barEv" -> "foo::bar()"; returns the input when it is not a C++ name.
std::string demangle(const char* name);

}  // namespace ccdiag
