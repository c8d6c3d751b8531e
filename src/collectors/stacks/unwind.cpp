#include "collectors/stacks/unwind.hpp"

#include "collectors/stacks/object_symbols.hpp"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>

namespace ccdiag {

std::string demangle(const char* name) {
  if (!name) return "";
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || !d) return name;
  std::string s(d);
  std::free(d);
  return s;
}

namespace {

// find_elf has no user argument: the pid whose root files are opened under.
thread_local pid_t tl_root_pid = 0;

int find_elf_in_target(Dwfl_Module* mod, void** userdata, const char* module_name, Dwarf_Addr base,
                       char** file_name, Elf** elfp) {
  if (module_name && module_name[0] == '/' && tl_root_pid > 0) {
    const int fd = open_in_target_root(tl_root_pid, module_name);
    if (fd >= 0) {
      *file_name = ::strdup(module_name);
      return fd;
    }
    // openat2 missing (kernel < 5.6, seccomp): same-namespace lookup below.
    if (errno != ENOSYS && errno != EPERM) return -1;
  }
  // "[vdso: PID]" (read from the process) and the fallback.
  return dwfl_linux_proc_find_elf(mod, userdata, module_name, base, file_name, elfp);
}

int no_debuginfo(Dwfl_Module*, void**, const char*, Dwarf_Addr, const char*, const char*, GElf_Word, char**) {
  return -1;
}

struct Snapshot {
  const std::vector<UnwindThread>* threads;
  const MemoryReader* memory;
  std::unordered_map<pid_t, size_t> by_tid;
};

pid_t next_thread(Dwfl*, void* arg, void** thread_argp) {
  auto* s = static_cast<Snapshot*>(arg);
  // *thread_argp holds (index + 1) of the last thread returned; NULL = start.
  const size_t next = reinterpret_cast<uintptr_t>(*thread_argp);
  if (next >= s->threads->size()) return 0;
  *thread_argp = reinterpret_cast<void*>(next + 1);
  return (*s->threads)[next].tid;
}

bool get_thread(Dwfl*, pid_t tid, void* arg, void** thread_argp) {
  auto* s = static_cast<Snapshot*>(arg);
  auto it = s->by_tid.find(tid);
  if (it == s->by_tid.end()) return false;
  *thread_argp = reinterpret_cast<void*>(it->second + 1);
  return true;
}

bool memory_read(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
  auto* s = static_cast<Snapshot*>(arg);
  return s->memory->read_exact(addr, result, sizeof *result);
}

thread_local Snapshot* tl_snapshot = nullptr;

bool set_initial_registers(Dwfl_Thread* thread, void* thread_arg) {
  const size_t idx = reinterpret_cast<uintptr_t>(thread_arg) - 1;
  const auto& t = (*tl_snapshot->threads)[idx];
  Dwarf_Word regs[33];
  for (unsigned i = 0; i < t.regs.count; ++i) regs[i] = t.regs.dwarf[i];
  if (!dwfl_thread_state_registers(thread, 0, t.regs.count, regs)) return false;
#if defined(__aarch64__)
  dwfl_thread_state_register_pc(thread, t.regs.pc);
#endif
  return true;
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {
    next_thread, get_thread, memory_read, set_initial_registers, nullptr, nullptr,
};

char* g_debuginfo_path = nullptr;  // default: ":.debug:/usr/lib/debug"

const Dwfl_Callbacks kUnwindCallbacks = {find_elf_in_target, no_debuginfo, nullptr, &g_debuginfo_path};
const Dwfl_Callbacks kSymbolCallbacks = {find_elf_in_target, dwfl_build_id_find_debuginfo, nullptr,
                                         &g_debuginfo_path};

struct DwflDeleter {
  void operator()(Dwfl* d) const { dwfl_end(d); }
};
using DwflPtr = std::unique_ptr<Dwfl, DwflDeleter>;

DwflPtr report_modules(const Dwfl_Callbacks* cbs, pid_t pid, std::string* err) {
  DwflPtr d(dwfl_begin(cbs));
  if (!d) {
    if (err) *err = dwfl_errmsg(-1);
    return nullptr;
  }
  dwfl_report_begin(d.get());
  const int rc = dwfl_linux_proc_report(d.get(), pid);
  dwfl_report_end(d.get(), nullptr, nullptr);
  if (rc != 0) {
    if (err) *err = std::string("cannot read modules of ") + std::to_string(pid) + ": " +
                    (rc > 0 ? std::strerror(rc) : dwfl_errmsg(-1));
    return nullptr;
  }
  return d;
}

struct RawFrame {
  Dwarf_Addr pc;
  bool activation;
};

struct WalkState {
  std::vector<RawFrame>* out;
  unsigned max;
};

int frame_cb(Dwfl_Frame* state, void* arg) {
  auto* w = static_cast<WalkState*>(arg);
  Dwarf_Addr pc = 0;
  bool act = false;
  if (!dwfl_frame_pc(state, &pc, &act)) return DWARF_CB_ABORT;
  w->out->push_back(RawFrame{pc, act});
  return w->out->size() >= w->max ? DWARF_CB_ABORT : DWARF_CB_OK;
}

bool is_runtime_module(const std::string& m) {
  for (const char* p : {"libc.so", "libc-", "ld-linux", "ld64.so", "libpthread", "libstdc++", "libgcc_s", "libm.so"})
    if (m.rfind(p, 0) == 0) return true;
  return false;
}

std::string module_basename(const char* name) {
  if (!name) return "";
  const char* slash = std::strrchr(name, '/');
  return slash ? slash + 1 : name;
}

}  // namespace

std::map<pid_t, UnwindResult> unwind_threads(pid_t pid, const std::vector<UnwindThread>& threads,
                                             const MemoryReader& memory, const UnwindOptions& opts,
                                             std::string* process_error) {
  std::map<pid_t, UnwindResult> out;
  tl_root_pid = pid;
  Snapshot snap{&threads, &memory, {}};
  for (size_t i = 0; i < threads.size(); ++i) snap.by_tid[threads[i].tid] = i;
  tl_snapshot = &snap;

  std::string err;
  DwflPtr unw = report_modules(&kUnwindCallbacks, pid, &err);
  if (!unw || !dwfl_attach_state(unw.get(), nullptr, pid, &kThreadCallbacks, &snap)) {
    if (process_error) *process_error = err.empty() ? std::string("dwfl_attach_state: ") + dwfl_errmsg(-1) : err;
    tl_snapshot = nullptr;
    return out;
  }
  std::map<pid_t, std::vector<RawFrame>> raw;
  for (const auto& t : threads) {
    auto& frames = raw[t.tid];
    WalkState w{&frames, opts.max_frames};
    const int rc = dwfl_getthread_frames(unw.get(), t.tid, frame_cb, &w);
    auto& r = out[t.tid];
    if (frames.size() >= opts.max_frames) {
      r.error = "truncated at " + std::to_string(opts.max_frames) + " frames";
    } else if (rc != 0) {
      const char* m = dwfl_errmsg(-1);
      r.error = m ? m : "unwind error";
      if (r.error.find("memory") != std::string::npos || r.error.find("Invalid") != std::string::npos)
        r.error += " (stack window exhausted or frame without CFI)";
    }
  }

  // The second session may load local debuginfo (~100 ms for libc's): it is
  // started only when something needs it — a retry below, a file:line not in
  // the cached memo, a name the symbol index cannot give.
  DwflPtr sym;
  bool sym_tried = false;
  auto sym_session = [&]() -> Dwfl* {
    if (!sym_tried) {
      sym_tried = true;
      sym = report_modules(&kSymbolCallbacks, pid, nullptr);
      if (sym && !dwfl_attach_state(sym.get(), nullptr, pid, &kThreadCallbacks, &snap)) sym.reset();
    }
    return sym.get();
  };
  // A PC without an .eh_frame FDE (e.g. libc's __clone3 right after the
  // syscall, in the thread that called pthread_create) needs .debug_frame from
  // the separate debuginfo: retry only those short, failed walks with the
  // session that may load it (~100 ms once for libc, so never by default).
  for (const auto& t : threads) {
    auto& r = out[t.tid];
    auto& frames = raw[t.tid];
    if (r.error.empty() || frames.size() > 2) continue;
    Dwfl* sd = sym_session();
    if (!sd) break;
    std::vector<RawFrame> again;
    WalkState w{&again, opts.max_frames};
    const int rc = dwfl_getthread_frames(sd, t.tid, frame_cb, &w);
    if (again.size() > frames.size()) {
      frames = std::move(again);
      r.error = rc == 0 ? "" : (dwfl_errmsg(-1) ? dwfl_errmsg(-1) : "unwind error");
    }
  }

  // Leaf without any CFI: glibc's clone3.S ends its CFI before the syscall
  // (so the child starts without bogus CFI), which leaves the *parent* — the
  // thread inside pthread_create — uncovered right after the syscall, and
  // libc has no frame pointers for the fallback. Such a leaf has not touched
  // its stack: the return address is at [sp] on x86_64 (in LR on aarch64).
  std::vector<UnwindThread> leaf;
  for (const auto& t : threads) {
    // One frame, or one plus the bogus frame the frame-pointer fallback made
    // of a non-frame-pointer rbp.
    if (out[t.tid].error.empty() || raw[t.tid].empty() || raw[t.tid].size() > 2) continue;
    UnwindThread u = t;
#if defined(__x86_64__)
    uint64_t ret = 0;
    if (!memory.read_exact(t.regs.sp, &ret, sizeof ret)) continue;
    u.regs.dwarf[16] = ret;
    u.regs.dwarf[7] = t.regs.sp + 8;
    u.regs.pc = ret;
    u.regs.sp = t.regs.sp + 8;
#elif defined(__aarch64__)
    u.regs.pc = t.regs.dwarf[30];
#else
    continue;
#endif
    leaf.push_back(u);
  }
  if (!leaf.empty()) {
    Snapshot lsnap{&leaf, &memory, {}};
    for (size_t i = 0; i < leaf.size(); ++i) lsnap.by_tid[leaf[i].tid] = i;
    tl_snapshot = &lsnap;
    DwflPtr ld = report_modules(&kUnwindCallbacks, pid, nullptr);
    if (ld && dwfl_attach_state(ld.get(), nullptr, pid, &kThreadCallbacks, &lsnap)) {
      for (const auto& u : leaf) {
        std::vector<RawFrame> rest;
        WalkState w{&rest, opts.max_frames - 1};
        const int rc = dwfl_getthread_frames(ld.get(), u.tid, frame_cb, &w);
        // Trust the guess only when the walk from it ends at a root.
        if (rest.size() < 2 || rc != 0) continue;
        rest.front().activation = false;  // a return address, not the interrupted pc
        auto& frames = raw[u.tid];
        frames.resize(1);
        frames.insert(frames.end(), rest.begin(), rest.end());
        out[u.tid].error.clear();
      }
    }
  }
  tl_snapshot = nullptr;
  struct Sym {
    std::string function, module;
    std::optional<std::string> file;
    std::optional<int> line;
  };
  // One per object with a frame shown: its names come from the cached
  // symbol index, its file:line from the cached memo (object_symbols.hpp).
  std::unordered_map<Dwfl_Module*, std::unique_ptr<ObjectSymbols>> objects;
  auto object_of = [&](Dwfl_Module* mod, const char* path) -> ObjectSymbols& {
    auto& o = objects[mod];
    if (!o) o = std::make_unique<ObjectSymbols>(pid, path ? path : "", opts.cache, opts.cache_stats);
    return *o;
  };
  std::unordered_map<Dwarf_Addr, Sym> cache;
  for (auto& [tid, frames] : raw) {
    auto& r = out[tid];
    for (const auto& f : frames) {
      // A return address points after the call: look up pc - 1 unless this is
      // the activation frame (innermost or signal frame), as eu-stack does.
      const Dwarf_Addr adj = f.pc - (f.activation ? 0 : 1);
      auto it = cache.find(adj);
      if (it == cache.end()) {
        Sym s;
        if (Dwfl_Module* mod = dwfl_addrmodule(unw.get(), adj)) {
          const char* mname = dwfl_module_info(mod, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
          s.module = module_basename(mname);
          Dwarf_Addr bias = 0;
          const bool have_elf = dwfl_module_getelf(mod, &bias) != nullptr;
          ObjectSymbols& obj = object_of(mod, have_elf ? mname : nullptr);
          const uint64_t rel = adj - bias;
          // The same module in the debuginfo session, for what the index cannot answer.
          auto sym_mod = [&]() -> Dwfl_Module* {
            Dwfl* sd = sym_session();
            return sd ? dwfl_addrmodule(sd, adj) : nullptr;
          };
          if (auto name = obj.function(rel)) {
            s.function = demangle(name->c_str());
          } else if (obj.unsupported()) {
            if (Dwfl_Module* sm = sym_mod()) {
              GElf_Off off = 0;
              GElf_Sym gsym{};
              // libdw 0.188 crashes when offset or sym is null: both are given.
              const char* name2 = dwfl_module_addrinfo(sm, adj, &off, &gsym, nullptr, nullptr, nullptr);
              if (name2) s.function = demangle(name2);
            }
          }
          if (opts.file_lines && (opts.runtime_lines || !is_runtime_module(s.module))) {
            auto fl = obj.line(rel, [&]() -> std::optional<FileLine> {
              Dwfl_Module* sm = sym_mod();
              if (!sm) return std::nullopt;
              Dwfl_Line* line = dwfl_module_getsrc(sm, adj);
              if (!line) return std::nullopt;
              int lineno = 0;
              const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
              if (!file) return std::nullopt;
              return FileLine{file, lineno};
            });
            if (fl) {
              s.file = fl->file;
              s.line = fl->line;
            }
          }
        }
        it = cache.emplace(adj, std::move(s)).first;
      }
      StackFrame sf;
      sf.pc = f.pc;
      sf.function = it->second.function;
      sf.module = it->second.module;
      sf.file = it->second.file;
      sf.line = it->second.line;
      r.frames.push_back(std::move(sf));
    }
  }
  for (auto& [mod, o] : objects) o->flush();
  return out;
}

}  // namespace ccdiag
