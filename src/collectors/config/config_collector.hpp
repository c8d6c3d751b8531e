// Host configuration that GPUDirect RDMA and NCCL depend on (docs/probe.md,
// probe config). /dev/shm is collected by collectors/host.
//
// Host paths read (through SysRoot): /proc/<pid>/{environ (RANK/LOCAL_RANK only),
// comm,limits} of the training ranks, /sys/module/nvidia_peermem/{version,initstate},
// /sys/kernel/mm/memory_peers/{nv_mem,nv_mem_nc}/version, /proc/modules,
// /proc/sys/kernel/osrelease, /proc/driver/nvidia/version, /sys/class/infiniband,
// /sys/bus/pci/devices/*/{vendor,class}, /dev/nvidia-nvswitchctl, /proc/*/comm.
//
// Evidence: host.memlock (one per rank process), host.peermem, host.fabric_manager.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "collectors/collector.hpp"

namespace ccdiag {

CollectorOutput collect_host_config(const CollectContext& ctx);

// "Max locked memory" row of /proc/<pid>/limits. A limit of nullopt means
// "unlimited". nullopt overall when the row is missing or malformed.
struct MemlockLimit {
  std::optional<uint64_t> soft, hard;
};
std::optional<MemlockLimit> parse_memlock_limit(std::string_view limits);

// "6.1.0-18-amd64" -> {6, 1}; nullopt when it does not start with two numbers.
std::optional<std::pair<int, int>> kernel_major_minor(std::string_view release);

}  // namespace ccdiag
