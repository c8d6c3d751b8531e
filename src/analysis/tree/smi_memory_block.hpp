// The GPU memory error sections of a pasted `nvidia-smi -q`:
//
//   ECC Errors                     (R450+: "DRAM Uncorrectable : N" under
//       Volatile / Aggregate        Volatile and Aggregate; before A100:
//           DRAM Uncorrectable : 0  "Double Bit" / "Total : N")
//   Retired Pages
//       Double Bit ECC : 2
//       Pending Page Blacklist : Yes        ("Pending Page Retirement" on newer drivers)
//   Remapped Rows                  (A100 and later)
//       Uncorrectable Error : 4
//       Pending : Yes
//       Remapping Failure Occurred : No
//
// What each means (NVIDIA's "GPU Memory Error Management" for A100/H100):
// uncorrectable errors since the last driver load (Volatile) crashed
// whatever ran on the GPU then; a remap or retirement pending needs a GPU
// reset before the bad row or page is out of use; a remapping failure means
// the GPU has no spare rows left and needs replacing. Lifetime counts
// (Aggregate, a remapped row) are history: the driver already recovered.
//
// Pure and streaming, like PastedBlocks, which holds one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ccdiag/evidence_set.hpp"

namespace ccdiag {

class SmiMemoryBlock {
 public:
  void line(std::string_view text, int64_t lineno);
  // Inside a section: every line matters until the section ends.
  bool open() const { return section_ != Section::none; }
  // The headers that open a section (for the line sieve).
  static constexpr std::string_view kHeaders[] = {"ECC Errors", "Retired Pages", "Remapped Rows"};
  // Each GPU's part begins "GPU 00000000:07:00.0" (an 8-digit PCI domain).
  static constexpr std::string_view kGpuHeader = "GPU 0000";
  // log.gpu_memory_errors when a section shows a fault (subject host when known).
  void finish(const std::string& source, const std::string& host, EvidenceSet& set);

 private:
  enum class Section { none, ecc, retired, remapped };
  Section section_ = Section::none;
  size_t indent_ = 0;        // the section header's indentation: a line at or left of it ends the section
  bool volatile_ = false;    // under ECC Errors / Volatile (not Aggregate)
  bool double_bit_ = false;  // under a pre-A100 "Double Bit" group
  std::string gpu_;          // the "GPU 00000000:07:00.0" header above
  struct Fault {
    double weight = 0;
    std::string what;
    std::string gpu;
    int64_t lineno = 0;
    std::string text;
  };
  std::optional<Fault> worst_;
  void note(double weight, std::string what, int64_t lineno, std::string_view text);
};

}  // namespace ccdiag
