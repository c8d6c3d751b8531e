// `ccdiag nccl attach`: identify NCCL in a live process or a core, choose the
// layout (DWARF > table > magic-pair distance), find every communicator by
// its magic pair and decode it, optionally twice to see which proxy steps
// move. Read-only: no ptrace stop, no write, only scannable() mappings.
#pragma once

#include <string>

#include "collectors/nccl/attach/attach_model.hpp"
#include "collectors/nccl/attach/comm_scan.hpp"
#include "collectors/nccl/attach/target.hpp"

namespace ccdiag::nccl::attach {

struct AttachOptions {
  std::string layout = "auto";  // auto | dwarf | table
  std::string nccl_lib;         // read this library file instead of the mapped path
  int samples = 1;              // 2: read again after `interval_s` and mark moving steps
  double interval_s = 0.5;
  ScanLimits limits;
  std::string host;
};

ProcessAttach attach_target(const AttachTarget& t, const AttachOptions& o);

}  // namespace ccdiag::nccl::attach
