// Host-level collectors: identity, software versions, /dev/shm. Host paths
// read (through SysRoot): /proc/sys/kernel/{hostname,osrelease,random/boot_id},
// /proc/version, /proc/driver/nvidia/version, /proc/mounts, the library
// directories listed in kLibraryDirs, /usr/local/cuda/version.json.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "collectors/collector.hpp"

namespace ccdiag {

CollectorOutput collect_host_identity(const CollectContext& ctx);
CollectorOutput collect_versions(const CollectContext& ctx);
CollectorOutput collect_dev_shm(const CollectContext& ctx);

// An evidence item about this host, stamped now (shared by the host collectors).
Evidence host_evidence(const CollectContext& ctx, const char* kind, const std::string& source);

// Pure helpers (tested on their own).
// "libnccl.so.2.28.9" -> "2.28.9"; nullopt for other names.
std::optional<std::string> nccl_version_from_soname(std::string_view file_name);
// "libcuda.so.550.54.15" / "libnvidia-ml.so.550.54.15" -> "550.54.15".
std::optional<std::string> user_driver_version_from_soname(std::string_view file_name);
// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 ..." -> "550.54.15"
std::optional<std::string> driver_version_from_proc(std::string_view text);
// The size= option of the /dev/shm line of /proc/mounts, in bytes ("size=65536k").
std::optional<int64_t> dev_shm_size_from_mounts(std::string_view mounts);

}  // namespace ccdiag
