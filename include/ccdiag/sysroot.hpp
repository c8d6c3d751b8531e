// SysRoot: the only way collectors read the host's /proc, /sys and /dev
// (docs/architecture.md). `--root DIR` prefixes every path, so tests and captured
// trees stand in for the host. Reads are bounded in size; none follows a
// symlink out of the root when a root is set.
//
// Fixture trees emulate sysfs attributes that fail at read time (EINVAL on an
// empty GID slot's gid_attrs/types/N, on `carrier` of a down netdev; EIO on a
// dead HCA's counters) with an optional `<root>/errno.map`: one
// "<path relative to the root> <ERRNO NAME>" per line ('#' comments). The path
// is matched after resolving symlinks, so a fault listed under sys/devices/...
// also fails when read through sys/class/..., as on a real host.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ccdiag/result.hpp"

namespace ccdiag {

class SysRoot {
 public:
  SysRoot() = default;                            // the live host ("/")
  explicit SysRoot(std::string prefix);           // a fixture or captured tree

  bool is_live() const { return prefix_.empty(); }
  const std::string& prefix() const { return prefix_; }

  // Host path ("/proc/1/status") -> path to open ("<root>/proc/1/status").
  std::string path(const std::string& host_path) const;

  // Whole file, at most `max_bytes` (sysfs/procfs files are small; a larger
  // file is truncated, not an error). Errors carry errno text and the host path.
  Result<std::string> read_file(const std::string& host_path, size_t max_bytes = 1 << 20) const;
  // First line without the newline; sysfs attributes are one line.
  Result<std::string> read_line(const std::string& host_path) const;
  Result<std::vector<std::string>> list_dir(const std::string& host_path) const;
  Result<std::string> read_link(const std::string& host_path) const;
  bool exists(const std::string& host_path) const;

 private:
  std::string prefix_;
  std::string real_prefix_;                               // realpath of prefix_
  std::shared_ptr<const std::map<std::string, int>> faults_;  // canonical relative path -> errno
  int injected_errno(const std::string& host_path) const;    // 0 when none
};

}  // namespace ccdiag
