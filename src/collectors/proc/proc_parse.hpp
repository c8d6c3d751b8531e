// Pure, total parsers for the /proc files rank discovery and stacks read.
// No I/O: the readers (rank_discovery.cpp, proc_threads.cpp) go through
// SysRoot. Every parser accepts any bytes: malformed input gives nullopt or
// skipped lines (counted where a count is useful), never a crash
// (fuzz/proc_parse_fuzz.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccdiag {

// /proc/PID/stat and /proc/PID/task/TID/stat. Field 2 is "(comm)" and comm may
// contain spaces and ')': the fields after it are parsed from the LAST ')'.
struct ProcStat {
  int64_t pid = 0;
  std::string comm;
  char state = '?';       // R S D T t Z X I ...
  int64_t ppid = 0;
  uint64_t utime = 0;     // clock ticks
  uint64_t stime = 0;     // clock ticks
  int64_t num_threads = 0;
  uint64_t starttime = 0; // clock ticks since boot
  uint64_t flags = 0;     // field 9: PF_* (PF_KTHREAD = 0x00200000 marks a kernel thread)
  // field 52 (Linux >= 3.5): the wait status a zombie left for its parent
  // (exit code << 8 | signal), 0 while the process lives.
  std::optional<int64_t> exit_status;
};
inline constexpr uint64_t kPfKthread = 0x00200000;
std::optional<ProcStat> parse_proc_stat(std::string_view text);

// "Key:\tvalue" lines of /proc/PID/status, in order; lines without ':' skipped.
std::vector<std::pair<std::string, std::string>> parse_status(std::string_view text);
std::optional<std::string> status_value(const std::vector<std::pair<std::string, std::string>>& kv,
                                        std::string_view key);

// /proc/PID/maps: "start-end perms offset dev inode   path".
struct MapEntry {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string perms;   // "r-xp"
  uint64_t offset = 0;
  uint64_t inode = 0;
  std::string path;    // may be empty, "[stack]", "/usr/lib/x.so (deleted)"
};
std::vector<MapEntry> parse_maps(std::string_view text, size_t* skipped = nullptr);

// /proc/PID/task/TID/syscall: "nr a1..a6 sp pc", "-1 sp pc" (blocked outside a
// syscall) or "running".
struct SyscallLine {
  bool running = false;
  int64_t nr = -1;
  std::array<uint64_t, 6> args{};
  uint64_t sp = 0;
  uint64_t pc = 0;
};
std::optional<SyscallLine> parse_syscall_line(std::string_view text);

// /proc/PID/task/TID/stack: "[<0>] futex_wait_queue+0x60/0xa0" lines ->
// function names, innermost first (offsets dropped; bad lines skipped).
std::vector<std::string> parse_kernel_stack(std::string_view text);

// Name of a syscall number on this architecture ("futex"), or "" when unknown.
std::string syscall_name(int64_t nr);

// /proc/PID/environ: NUL-separated KEY=VALUE entries (entries without '=' skipped).
std::vector<std::pair<std::string, std::string>> parse_environ(std::string_view bytes);

// The environment allowlist (docs/ranks.md): RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, GROUP_RANK, TORCHELASTIC_RUN_ID, MASTER_ADDR, MASTER_PORT,
// SLURM_*, OMPI_COMM_WORLD_*, CUDA_VISIBLE_DEVICES, NCCL_*. Everything else is
// dropped. Allowed variables whose name or value looks like a credential have
// their value replaced by "<redacted>".
bool env_name_allowed(std::string_view name);
bool looks_like_credential(std::string_view name, std::string_view value);
inline constexpr const char* kRedacted = "<redacted>";
nlohmann::json filter_environment(const std::vector<std::pair<std::string, std::string>>& env);

// Libraries of interest among the mapped files.
struct MappedLibraries {
  std::string nccl_path;                  // libnccl.so* mapped, "" when none
  std::optional<std::string> nccl_version;  // from a versioned file name "libnccl.so.2.21.5"
  std::vector<std::string> torch_libs;    // libtorch*.so, libc10*.so basenames
  bool cuda_driver = false;               // libcuda.so mapped
  bool python = false;                    // libpython*.so mapped or exe is python
};
MappedLibraries mapped_libraries(const std::vector<MapEntry>& maps);

// "/dev/nvidia3" -> 3; "/dev/nvidiactl", "/dev/nvidia-uvm" -> nullopt.
std::optional<int> gpu_index_from_device_path(std::string_view path);

}  // namespace ccdiag
