// Diagnostic command output pasted into a log or an issue, read as blocks
// rather than lines: what such output shows lies in several lines together
// (a bandwidth matrix, a `systemctl status` unit and its Active: line).
//
//   p2pBandwidthLatencyTest (CUDA samples): the "P2P=Disabled" and
//     "P2P=Enabled" bandwidth matrices; enabled P2P far slower than the copy
//     through host memory means peer-to-peer DMA is redirected or translated
//     (IOMMU, ACS) or broken in the driver -> log.p2p_bandwidth_collapse.
//   systemctl status nvidia-fabricmanager: the unit line followed by
//     "Active: failed" / "Active: inactive (dead)", and the journal's
//     "nvidia-fabricmanager.service: Failed ..." -> log.fabric_manager_failed.
//
//   setpci reading the ACS control register (`setpci -s BDF ecap_acs+6.w`,
//     or PLX switches' `f2a.w`, the reads NCCL's troubleshooting guide
//     gives): the 4-hex-digit values that follow; a non-zero one means ACS
//     is on at that bridge and P2P TLPs go up to the root complex
//     -> log.setpci_acs_enabled.
//   A pasted stack (gdb `bt` / `thread apply all bt`, eu-stack, py-spy
//     dump --native): a thread whose innermost NCCL frame is NCCL's own host
//     path of a collective launch (ncclLaunchKernel, ncclStrongStream*,
//     ncclGroupEnd, ncclEnqueueCheck) is inside the library, not waiting for
//     a peer -> log.stack_in_nccl_launch.
//   nvidia-smi -q: its ECC, retired-page and remapped-row sections
//     (smi_memory_block.hpp) -> log.gpu_memory_errors.
//   A native crash (SIGSEGV, glibc's heap checks) and the frames printed
//     after it (crash_stack_block.hpp): NCCL's code among the innermost
//     -> log.crash_in_nccl / log.crash_in_net_plugin.
//   nvidia-smi topo -m: the matrix's GPU-to-GPU cells (NV# = NVLink; PIX,
//     PXB, PHB, NODE, SYS = PCIe through switches, host bridge or CPU
//     interconnect) and whether NICs are columns too -> log.gpu_topology
//     (context: which GPU pairs peer over PCIe, the path ACS, the IOMMU or
//     a driver's P2P support decide).
//
// Pure and streaming: one line at a time, findings at finish().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/tree/crash_stack_block.hpp"
#include "analysis/tree/literal_gate.hpp"
#include "analysis/tree/smi_memory_block.hpp"
#include "ccdiag/evidence_set.hpp"

namespace ccdiag {

class PastedBlocks {
 public:
  // crash_text: false where the line is known to hold none of
  // CrashStackBlock's markers (the line sieve's crash set).
  void line(std::string_view text, int64_t lineno, bool crash_text = true);
  // No block is open: then a line changes nothing unless it holds one of
  // add_literals()' literals (one that can open a block), so a line without
  // any may be skipped unread.
  bool idle() const {
    return topo_columns_.empty() && !in_acs_read_ && frames_.empty() && !open_matrix_ && !fm_unit_line_ &&
           !smi_memory_.open() && !crash_.open();
  }
  static void add_literals(LineLiterals& out);
  // Appends the block findings (subject host when known) to `set`.
  // nccl_seen: the log holds NCCL's own lines (for the crash reader).
  void finish(const std::string& source, const std::string& host, EvidenceSet& set, bool nccl_seen = false);

 private:
  struct Matrix {
    bool bidirectional = false;
    bool enabled = false;
    int64_t lineno = 0;
    std::vector<double> off_diagonal;  // GB/s between distinct devices
  };
  std::vector<Matrix> matrices_;
  std::optional<size_t> open_matrix_;  // index into matrices_ while its rows are read
  std::optional<int64_t> fm_unit_line_;
  struct Hit {
    int64_t lineno;
    std::string text;
  };
  std::optional<Hit> fm_failed_;
  // setpci ACS reads: inside the block after the command, the values read and the non-zero ones.
  bool in_acs_read_ = false;
  int acs_values_ = 0, acs_enabled_ = 0;
  std::optional<Hit> acs_first_enabled_;
  // The frames of the stack being read, innermost first (function names).
  std::vector<std::string> frames_;
  int64_t frames_line_ = 0;
  void close_stack();
  std::optional<Hit> in_nccl_launch_;  // "ncclLaunchKernel <- ncclGroupEnd" and the first frame's line
  // nvidia-smi topo -m: the header's device columns while its rows are read.
  std::vector<std::string> topo_columns_;
  int64_t topo_line_ = 0;
  int topo_gpus_ = 0, topo_nics_ = 0, topo_nvlink_pairs_ = 0, topo_pcie_pairs_ = 0;
  bool topo_seen_ = false;
  // nvidia-smi -q: its memory error sections.
  SmiMemoryBlock smi_memory_;
  // A native crash's stack: inside NCCL or not.
  CrashStackBlock crash_;
};

}  // namespace ccdiag
