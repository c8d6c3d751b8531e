#include "collectors/nccl/attach/target.hpp"

#include <algorithm>
#include <cstdlib>
#include <elf.h>

#include "collectors/nccl/attach/core_file.hpp"
#include "collectors/proc/proc_parse.hpp"

namespace ccdiag::nccl::attach {

bool scannable(const TargetMapping& m) {
  if (!m.readable || !m.writable || m.shared) return false;
  if (m.path.empty() || m.path == "[heap]" || m.path.rfind("[anon:", 0) == 0) return true;
  return false;
}

Result<AttachTarget> open_live_target(const SysRoot& root, pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  auto maps_text = root.read_file(proc + "/maps", 64u << 20);
  if (!maps_text) return make_error("cannot read its memory map: " + maps_text.error().message, "pid " + std::to_string(pid),
                                    "the process is gone, or ccdiag lacks ptrace access (same user, or CAP_SYS_PTRACE)");
  AttachTarget t;
  t.kind = "live";
  t.pid = pid;
  t.source = "pid " + std::to_string(pid);
  if (auto c = root.read_line(proc + "/comm")) t.command = *c;
  for (const auto& e : parse_maps(*maps_text)) {
    TargetMapping m;
    m.start = e.start;
    m.end = e.end;
    m.offset = e.offset;
    m.readable = e.perms.size() > 0 && e.perms[0] == 'r';
    m.writable = e.perms.size() > 1 && e.perms[1] == 'w';
    m.executable = e.perms.size() > 2 && e.perms[2] == 'x';
    m.shared = e.perms.size() > 3 && e.perms[3] == 's';
    m.path = e.path;
    t.maps.push_back(std::move(m));
  }
  if (auto tasks = root.list_dir(proc + "/task")) {
    for (const auto& name : *tasks) {
      char* end = nullptr;
      long tid = std::strtol(name.c_str(), &end, 10);
      if (end && *end == 0 && tid > 0) t.threads.push_back({static_cast<int>(tid), std::nullopt});
    }
    std::sort(t.threads.begin(), t.threads.end(), [](const TargetThread& a, const TargetThread& b) { return a.tid < b.tid; });
  }
  t.memory = std::make_shared<LiveMemoryReader>(pid);
  t.file_prefix = root.path(proc + "/root");
  t.map_files_dir = root.path(proc + "/map_files");
  return t;
}

Result<AttachTarget> open_core_target(const std::string& path) {
  auto core = CoreFile::open(path);
  if (!core) return core.error();
  return core_target(std::make_shared<CoreFile>(std::move(*core)), path);
}

AttachTarget core_target(std::shared_ptr<const CoreFile> shared, const std::string& path) {
  AttachTarget t;
  t.kind = "core";
  t.pid = shared->pid();
  t.command = shared->command();
  t.source = path;
  for (const auto& l : shared->loads()) {
    TargetMapping m;
    m.start = l.vaddr;
    m.end = l.vaddr + l.memsz;
    m.readable = (l.flags & PF_R) != 0;
    m.writable = (l.flags & PF_W) != 0;
    m.executable = (l.flags & PF_X) != 0;
    // NT_FILE names the file-backed ranges; everything else is anonymous.
    for (const auto& f : shared->files()) {
      if (f.start <= l.vaddr && l.vaddr < f.end) {
        m.path = f.path;
        m.offset = f.file_offset + (l.vaddr - f.start);
        break;
      }
    }
    // A segment with nothing dumped cannot be scanned; keep it for the map.
    t.maps.push_back(std::move(m));
  }
  // NT_FILE entries not covered by a PT_LOAD still tell where libraries were.
  for (const auto& f : shared->files()) {
    bool covered = std::any_of(t.maps.begin(), t.maps.end(), [&](const TargetMapping& m) { return m.start == f.start; });
    if (covered) continue;
    TargetMapping m;
    m.start = f.start;
    m.end = f.end;
    m.offset = f.file_offset;
    m.readable = true;
    m.path = f.path;
    t.maps.push_back(std::move(m));
  }
  std::sort(t.maps.begin(), t.maps.end(), [](const TargetMapping& a, const TargetMapping& b) { return a.start < b.start; });
  for (const auto& th : shared->threads()) {
    TargetThread tt;
    tt.tid = th.tid;
    if (shared->machine() == EM_X86_64) tt.fs_base = th.fs_base;
    t.threads.push_back(tt);
  }
  t.truncated = shared->truncated();
  t.files_note_missing = shared->files().empty();
  if (shared->truncated())
    t.notes.push_back("core file is truncated: " + std::to_string(shared->missing_bytes() >> 10) +
                      " KiB of dumped memory are missing; structures there read as unavailable");
  if (shared->machine() != EM_X86_64) t.notes.push_back("core of a non-x86_64 process: no layout table covers it");
  t.memory = shared;
  return t;
}

}  // namespace ccdiag::nccl::attach
