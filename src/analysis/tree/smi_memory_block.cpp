#include "analysis/tree/smi_memory_block.hpp"

#include <charconv>

#include "ccdiag/text_scan.hpp"

namespace ccdiag {

namespace {

std::optional<long long> count(std::string_view v) {
  long long n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size()) return std::nullopt;
  return n;
}

}  // namespace

void SmiMemoryBlock::note(double weight, std::string what, int64_t lineno, std::string_view text) {
  if (worst_ && worst_->weight >= weight) return;
  worst_ = Fault{weight, std::move(what), gpu_, lineno, std::string(text.substr(0, 300))};
}

void SmiMemoryBlock::line(std::string_view text, int64_t lineno) {
  const size_t indent = text.find_first_not_of(" \t");
  if (indent == std::string_view::npos) return;
  const std::string_view t = trim_blanks(text);
  // "GPU 00000000:07:00.0" opens each device's part of `nvidia-smi -q`.
  if (indent == 0 && t.substr(0, kGpuHeader.size()) == kGpuHeader && t.find(' ', 4) == std::string_view::npos)
    gpu_ = std::string(t.substr(4));
  for (size_t k = 0; k < std::size(kHeaders); ++k)
    if (t == kHeaders[k]) {
      section_ = k == 0 ? Section::ecc : k == 1 ? Section::retired : Section::remapped;
      indent_ = indent;
      volatile_ = double_bit_ = false;
      return;
    }
  if (section_ == Section::none) return;
  if (indent <= indent_) {
    section_ = Section::none;
    return;
  }
  const size_t colon = t.find(':');
  if (colon == std::string_view::npos) {
    // Sub-headers: which counters follow.
    if (section_ == Section::ecc) {
      if (t == "Volatile") volatile_ = true;
      else if (t.rfind("Aggregate", 0) == 0) volatile_ = false;
      else if (t == "Double Bit") double_bit_ = true;
      else if (t == "Single Bit") double_bit_ = false;
    }
    return;
  }
  const std::string_view key = trim_blanks(t.substr(0, colon)), value = trim_blanks(t.substr(colon + 1));
  const auto n = count(value);
  switch (section_) {
    case Section::ecc: {
      const bool uncorrectable = key.find("Uncorrectable") != std::string_view::npos || (double_bit_ && key == "Total");
      if (uncorrectable && n && *n > 0)
        note(volatile_ ? 20 : 4,
             std::string(volatile_ ? "uncorrectable ECC errors since the driver loaded (" : "uncorrectable ECC errors in the GPU's lifetime (") +
                 std::string(key) + " " + std::to_string(*n) + ")",
             lineno, text);
      break;
    }
    case Section::retired:
      if (key.rfind("Pending Page", 0) == 0 && value == "Yes")
        note(15, "a page retirement is pending (the GPU needs a reset)", lineno, text);
      else if (key == "Double Bit ECC" && n && *n > 0)
        note(4, "pages retired for double-bit ECC errors (" + std::to_string(*n) + ")", lineno, text);
      break;
    case Section::remapped:
      if (key == "Remapping Failure Occurred" && value == "Yes")
        note(30, "row remapping failed: no spare rows left (the GPU needs replacing)", lineno, text);
      else if (key == "Pending" && value == "Yes")
        note(15, "a row remap is pending (the GPU needs a reset)", lineno, text);
      else if (key == "Uncorrectable Error" && n && *n > 0)
        note(4, "rows remapped after uncorrectable errors (" + std::to_string(*n) + ")", lineno, text);
      break;
    case Section::none:
      break;
  }
}

void SmiMemoryBlock::finish(const std::string& source, const std::string& host, EvidenceSet& set) {
  if (!worst_) return;
  Finding f;
  f.id = "log.gpu_memory_errors";
  f.layer = Layer::hardware;
  // History (a lifetime count, a row already remapped) is context, not this failure's cause.
  const bool current = worst_->weight >= 15;
  f.severity = current ? Severity::error : Severity::warning;
  f.role = current ? FindingRole::primary : FindingRole::context;
  f.summary = "a pasted nvidia-smi -q shows GPU memory errors" +
              (worst_->gpu.empty() ? std::string() : " on GPU " + worst_->gpu) + ": " + worst_->what;
  if (!host.empty()) f.subject.host = host;
  if (!worst_->gpu.empty()) f.subject.gpu = worst_->gpu;
  f.provenance.push_back(Provenance{source, worst_->lineno, worst_->text});
  f.order = worst_->lineno;
  f.supports = {{"gpu_ecc_or_memory_fault", worst_->weight}};
  set.findings.push_back(std::move(f));
}

}  // namespace ccdiag
