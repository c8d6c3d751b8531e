// Training-rank processes on this host, found through /proc without help
// from other layers: a process whose environment carries RANK or LOCAL_RANK
// (torchrun, torch.distributed.launch, most launchers). Only those few keys
// are kept from the environment — never anything else (it may hold secrets).
//
// Host paths read: /proc/<pid>/{environ,comm,status}. environ of another
// user's process needs the same uid or CAP_SYS_PTRACE: those are skipped and
// counted, not errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/sysroot.hpp"

namespace ccdiag {

struct ConfigRankProcess {
  int64_t pid = 0;
  std::optional<int> rank;
  std::optional<int> local_rank;
  std::string cuda_visible_devices;
  std::string comm;
  int64_t ppid = 0;
};

// Children that inherited their parent's RANK (dataloader workers) are dropped.
struct RankScan {
  std::vector<ConfigRankProcess> ranks;
  size_t unreadable = 0;  // processes whose environ we could not read
};

RankScan find_rank_processes(const SysRoot& root, size_t max_processes = 65536);

// Pure: the RANK / LOCAL_RANK / CUDA_VISIBLE_DEVICES values of a NUL-separated
// environ block; false when it names no rank.
bool rank_from_environ(std::string_view environ, ConfigRankProcess& out);

// "Tgid:\t1234" of /proc/<id>/status: the process a thread id belongs to.
std::optional<int64_t> tgid_from_status(std::string_view status);

}  // namespace ccdiag
