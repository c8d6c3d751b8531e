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
//
// The launcher's tree decides what is a rank: a candidate whose parent (or an
// ancestor) is itself a rank is one of that rank's workers (DataLoader,
// torch.compile, multiprocessing), inheriting RANK: it is listed under its
// rank, never as a rank. A zombie child of a launcher (or of the parent of
// other ranks) is a dead rank: its exit status comes from /proc/PID/stat, its
// rank from the local ranks its live siblings leave free. Kernel threads and
// processes that vanish during the scan are skipped silently.
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
  std::optional<int64_t> uid;         // real uid (status "Uid:")
  bool kernel_thread = false;   // PF_KTHREAD: never a rank, nothing to read
  std::optional<int64_t> exit_status;  // zombie's wait status (exit code << 8 | signal)
  bool rank_inferred = false;   // a dead rank's number inferred from its live siblings
  struct Worker {
    int64_t pid = 0;
    int64_t ppid = 0;
    std::string comm;
    char state = '?';
  };
  std::vector<Worker> workers;  // forked children that inherited the rank's environment
  bool dead() const { return state == 'Z' || state == 'X'; }
};

// "SIGKILL" for 9, "signal 77" for numbers without a name.
std::string signal_name(int sig);

struct RankDiscovery {
  std::vector<RankProcess> ranks;   // sorted by rank, then pid
  int processes_scanned = 0;
  int unreadable = 0;               // environ/maps denied (permissions)
  int workers = 0;                  // rank-like processes found to be workers of a rank
};

RankDiscovery discover_ranks(const SysRoot& root);
// One process, whether or not it looks like a rank (for `stacks PID`).
std::optional<RankProcess> read_process(const SysRoot& root, int64_t pid, bool* unreadable = nullptr);
// Only what the environment says of one process (rank, local rank, world
// sizes, env): `stacks PID` labels its output with it and reads nothing else
// (no maps, fds or parent: ~0.4 ms of a 10 ms capture).
std::optional<RankProcess> read_process_environment(const SysRoot& root, int64_t pid);
nlohmann::json to_json(const RankProcess& r);

}  // namespace ccdiag
