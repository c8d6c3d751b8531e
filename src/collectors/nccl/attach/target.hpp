// AttachTarget: one address space to read NCCL state from — a live process
// (process_vm_readv, never ptrace-stopped here) or a core file — with its
// memory map and threads in one shape, so discovery and decoding do not care
// which it is.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ccdiag/result.hpp"
#include "ccdiag/sysroot.hpp"
#include "sys/memory_reader.hpp"

namespace ccdiag::nccl::attach {

struct TargetMapping {
  uint64_t start = 0, end = 0, offset = 0;
  bool readable = false, writable = false, executable = false, shared = false;
  std::string path;  // "" anonymous, "[heap]", "/usr/lib/libnccl.so.2", "/dev/nvidia0"
  uint64_t size() const { return end - start; }
};

struct TargetThread {
  int tid = 0;
  std::optional<uint64_t> fs_base;  // core files (NT_PRSTATUS); live reads do not stop threads
};

struct AttachTarget {
  std::string kind;    // "live" | "core"
  int pid = 0;
  std::string command; // comm / pr_fname
  std::string source;  // "pid 1234" or the core's path
  std::vector<TargetMapping> maps;
  std::vector<TargetThread> threads;
  std::shared_ptr<const MemoryReader> memory;
  // Where a mapped file's path can be opened from this host: live, the
  // process's own root (/proc/PID/root, containers); core, "" (the path as
  // recorded, or --nccl-lib).
  std::string file_prefix;
  // Live: /proc/PID/map_files (through the SysRoot). Its entries open the very
  // inode that is mapped, also after the file was deleted or replaced on disk.
  std::string map_files_dir;
  // Cores: dumped bytes missing past the end of the file, and whether the
  // mapped-file list (NT_FILE) is missing or cut (gcore writes it last).
  bool truncated = false;
  bool files_note_missing = false;
  std::vector<std::string> notes;  // what limits the reading ("core truncated: 12 MiB missing")
};

// Live process: /proc/PID/maps, comm and task list through `root`; memory
// through process_vm_readv (needs ptrace access: same uid + Yama <= 1, or
// CAP_SYS_PTRACE). Errors: no such process, maps unreadable (permission).
Result<AttachTarget> open_live_target(const SysRoot& root, pid_t pid);

// Core file (ELF ET_CORE): PT_LOAD segments, NT_FILE, NT_PRSTATUS.
Result<AttachTarget> open_core_target(const std::string& path);
class CoreFile;
// The same from a parsed core (tests and fuzzing build cores in memory).
AttachTarget core_target(std::shared_ptr<const CoreFile> core, const std::string& name);

// Mappings that may hold heap objects and are safe to scan: private, readable
// and writable, anonymous or [heap] / [anon:*]; never devices (/dev/nvidia*,
// /dev/nvidia-uvm), shared memory, files or guard regions.
bool scannable(const TargetMapping& m);

}  // namespace ccdiag::nccl::attach
