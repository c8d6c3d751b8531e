// Collecting this host into a bundle: shared by `collect` (kept) and live
// `diagnose` (a temporary bundle), so live and post-mortem answers agree.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "bundle/bundle.hpp"
#include "cli/common.hpp"

namespace ccdiag {

struct LiveBundle {
  std::shared_ptr<TempDir> temp;
  std::string out_dir;
  size_t unchecked = 0;
  const std::string& dir() const { return temp ? temp->path : out_dir; }
};

// Collects this host (or the --root tree) and writes a bundle to `out_dir`
// (a fresh temporary directory when empty). `extra_logs` are copied into
// raw/logs/. Bounded by --timeout.
// `progress`: a progress line on stderr (TTY only) naming the collectors
// still running and the time left before the deadline.
Result<LiveBundle> collect_live_bundle(const GlobalOptions& g, const std::string& out_dir = {},
                                       const std::vector<std::string>& extra_logs = {},
                                       std::ostream* progress = nullptr);

}  // namespace ccdiag
