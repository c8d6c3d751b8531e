// Rank discovery: which processes on this host (or in a --root tree) are
// training ranks, and what /proc says about each (docs/ranks.md).
//
// Host paths read, per process: /proc/PID/{stat,status,environ,maps,cmdline,
// fd/*}, and /proc/PPID/{comm,cmdline} of the parent. environ of other users'
// processes needs root or CAP_SYS_PTRACE; such processes are counted as
// unreadable, not guessed. The environment is allowlisted and credential-like
// values redacted (collectors/proc/proc_parse.hpp): nothing else leaves here.
//
// A process is a rank when its environment has RANK, LOCAL_RANK,
// OMPI_COMM_WORLD_RANK or SLURM_PROCID together with a mapped libnccl or
// libtorch, or RANK and WORLD_SIZE, or when it maps libnccl and holds a
// /dev/nvidiaN open (the launcher maps libnccl too but holds no GPU).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/sysroot.hpp"

namespace ccdiag {

struct RankProcess {
  int64_t pid = 0;
  std::string comm;
  std::string exe;              // basename of argv[0] (arguments are never kept: they may hold secrets)
  char state = '?';
  int64_t threads = 0;
  int64_t ppid = 0;
  std::string parent_comm;
  std::string launcher;         // torchrun | torch.distributed.launch | srun | mpirun | deepspeed | "" (unknown)
  std::optional<std::string> nspid;  // container-local pid (last NSpid field) when different
  std::optional<int> rank, local_rank, world_size, local_world_size;
  nlohmann::json env = nlohmann::json::object();  // allowlisted, redacted
  std::string nccl_path;
  std::optional<std::string> nccl_version;
  std::vector<std::string> torch_libs;
  bool cuda_driver = false;
  bool python = false;
  std::vector<int> gpus;        // /dev/nvidiaN held open
  std::optional<int64_t> tracer_pid;  // TracerPid when not 0
};

struct RankDiscovery {
  std::vector<RankProcess> ranks;   // sorted by rank, then pid
  int processes_scanned = 0;
  int unreadable = 0;               // environ/maps denied (permissions)
};

RankDiscovery discover_ranks(const SysRoot& root);
// One process, whether or not it looks like a rank (for `stacks PID`).
std::optional<RankProcess> read_process(const SysRoot& root, int64_t pid, bool* unreadable = nullptr);
nlohmann::json to_json(const RankProcess& r);

}  // namespace ccdiag
