#include "analysis/tree/pasted_blocks.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace ccdiag {

namespace {

constexpr size_t kMaxMatrices = 16;
constexpr size_t kMaxValues = 64 * 64;

bool has(std::string_view s, std::string_view needle) { return s.find(needle) != std::string_view::npos; }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

// "   1  12.99 673.20  22.20 " -> row 1 with its values; anything else -> no row.
std::optional<std::pair<int, std::vector<double>>> matrix_row(std::string_view line) {
  size_t i = 0;
  auto skip_space = [&] {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
  };
  skip_space();
  const size_t b = i;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
  if (i == b || i - b > 4 || i >= line.size() || !std::isspace(static_cast<unsigned char>(line[i])))
    return std::nullopt;
  const int row = std::atoi(std::string(line.substr(b, i - b)).c_str());
  std::vector<double> values;
  while (true) {
    skip_space();
    if (i >= line.size()) break;
    const size_t s = i;
    while (i < line.size() && (std::isdigit(static_cast<unsigned char>(line[i])) || line[i] == '.')) ++i;
    if (i == s || (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i])))) return std::nullopt;
    values.push_back(std::atof(std::string(line.substr(s, i - s)).c_str()));
  }
  if (values.size() < 2) return std::nullopt;
  return std::make_pair(row, std::move(values));
}

constexpr size_t kMaxFrames = 256;

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '~'; }

// The function of one stack frame line, or nothing when the line is no frame:
//   gdb / eu-stack  "#3  0x00007f.. in ncclGroupEnd () from libnccl.so.2", "#0  foo (a=1) at x.c:3"
//   py-spy          "    ncclLaunchKernel (enqueue.cc:968)", "    sched_yield (libc.so.6)"
std::optional<std::string> frame_function(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  const size_t indent = i;
  if (i < line.size() && line[i] == '#') {
    ++i;
    const size_t d = i;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
    if (i == d) return std::nullopt;
    while (i < line.size() && line[i] == ' ') ++i;
    if (line.substr(i, 2) == "0x") {
      while (i < line.size() && line[i] != ' ') ++i;
      while (i < line.size() && line[i] == ' ') ++i;
      if (line.substr(i, 3) == "in ") i += 3;
    }
    if (line.substr(i, 2) == "??") return std::string("??");  // a frame gdb could not name
  } else if (indent < 2) {
    return std::nullopt;  // py-spy indents every frame
  }
  const size_t b = i;
  while (i < line.size() && is_ident(line[i])) ++i;
  if (i == b || i >= line.size()) return std::nullopt;
  // gdb: "name (args)" or "name(types) ()"; py-spy: "name (file:line)".
  const bool spaced = line[i] == ' ' && i + 1 < line.size() && line[i + 1] == '(';
  if (line[indent] == '#') {
    if (line[i] != '(' && !spaced) return std::nullopt;
  } else if (!spaced || line.back() != ')') {
    // py-spy always writes "name (where)"; "    foo(x)" is a line of Python source.
    return std::nullopt;
  }
  return std::string(line.substr(b, i - b));
}

bool nccl_function(std::string_view f) {
  return f.rfind("nccl", 0) == 0 || f == "groupLaunch" || f == "doLaunches";
}

// NCCL's host path of a collective launch: enqueueing, the group end, the
// kernel launch on its strong stream. A thread found there is inside NCCL.
bool nccl_launch_path(std::string_view f) {
  for (std::string_view p : {"ncclLaunch", "ncclStrongStream", "ncclGroupEnd", "ncclEnqueueCheck", "groupLaunch",
                             "doLaunches", "ncclPrepareTasks"})
    if (f.rfind(p, 0) == 0) return true;
  return false;
}

}  // namespace

void PastedBlocks::close_stack() {
  if (!in_nccl_launch_) {
    for (size_t k = 0; k < frames_.size(); ++k) {
      if (!nccl_function(frames_[k])) continue;
      // The innermost NCCL frame decides; an idle proxy thread or a comm
      // being destroyed is elsewhere in NCCL and says nothing here.
      if (nccl_launch_path(frames_[k])) {
        std::string chain = frames_[k];
        for (size_t o = k + 1; o < frames_.size() && o < k + 4; ++o)
          if (nccl_function(frames_[o])) chain += " <- " + frames_[o];
        in_nccl_launch_ = Hit{frames_line_, chain};
      }
      break;
    }
  }
  frames_.clear();
}

namespace {

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const size_t b = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool gpu_label(std::string_view t) {
  return t.size() > 3 && starts(t, "GPU") &&
         std::all_of(t.begin() + 3, t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

void PastedBlocks::line(std::string_view text, int64_t lineno, bool crash_text) {
  smi_memory_.line(text, lineno);
  crash_.line(text, lineno, crash_text);
  // ---- nvidia-smi topo -m: "\tGPU0\tGPU1\t...\tNIC0\tCPU Affinity\t..." then one row per device
  if (has(text, "GPU0") && has(text, "CPU Affinity")) {
    topo_columns_.clear();
    for (auto t : split_ws(text)) {
      if (t == "CPU") break;
      if (topo_columns_.size() < 256) topo_columns_.emplace_back(t);
    }
    if (topo_columns_.size() < 2 || !gpu_label(topo_columns_[0])) {
      topo_columns_.clear();
    } else if (!topo_seen_) {
      topo_seen_ = true;
      topo_line_ = lineno;
      for (const auto& c : topo_columns_) (gpu_label(c) ? topo_gpus_ : topo_nics_) += 1;
    }
    return;
  }
  if (!topo_columns_.empty()) {
    const auto cells = split_ws(text);
    if (cells.size() > topo_columns_.size() && gpu_label(cells[0]) && topo_line_ > 0) {
      // Row GPUi: its cells against the GPU columns after it (each pair once).
      const std::string row(cells[0]);
      bool after = false;
      for (size_t c = 0; c < topo_columns_.size(); ++c) {
        if (topo_columns_[c] == row) { after = true; continue; }
        if (!after || !gpu_label(topo_columns_[c])) continue;
        const std::string_view v = cells[c + 1];
        if (starts(v, "NV")) ++topo_nvlink_pairs_;
        else if (v == "PIX" || v == "PXB" || v == "PHB" || v == "NODE" || v == "SYS" || v == "SOC") ++topo_pcie_pairs_;
      }
      return;
    }
    // NIC rows and the legend end nothing that matters; a line of no cells closes the block.
    if (cells.empty() || (!gpu_label(cells[0]) && !starts(cells[0], "NIC") && !starts(cells[0], "mlx") &&
                          cells[0] != "Legend:"))
      topo_columns_.clear();
    else if (!gpu_label(cells[0]))
      return;
  }
  // ---- setpci reads of the ACS control register: "setpci -s 03:00.0 ecap_acs+6.w" (or PLX's "f2a.w"),
  // one value per bridge on the lines after it. A write ("...=0000") is someone disabling ACS.
  {
    if (has(text, "setpci") && (has(text, "ecap_acs") || has(text, "ECAP_ACS") || has(text, "f2a.w"))) {
      const size_t reg = std::min(text.find("f2a.w"), std::min(text.find("ecap_acs"), text.find("ECAP_ACS")));
      in_acs_read_ = text.find('=', reg) == std::string_view::npos;
      return;
    }
    if (in_acs_read_) {
      std::string_view v = text;
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
      const bool hex4 = v.size() == 4 && std::all_of(v.begin(), v.end(), [](char c) {
                          return std::isxdigit(static_cast<unsigned char>(c)) != 0;
                        });
      if (hex4) {
        ++acs_values_;
        if (v != "0000") {
          ++acs_enabled_;
          if (!acs_first_enabled_) acs_first_enabled_ = Hit{lineno, std::string(text.substr(0, 300))};
        }
        return;
      }
      // sudo's prompt may sit between the command and its output; anything else ends the block.
      if (!has(text, "password for")) in_acs_read_ = false;
    }
  }
  // ---- pasted stacks: one thread's frames until a line that is no frame
  if (auto fn = frame_function(text)) {
    if (frames_.empty()) frames_line_ = lineno;
    if (frames_.size() < kMaxFrames) frames_.push_back(std::move(*fn));
    return;
  }
  if (!frames_.empty()) close_stack();

  // ---- p2pBandwidthLatencyTest matrices
  if (has(text, "P2P=") && (has(text, "P2P=Disabled") || has(text, "P2P=Enabled"))) {
    open_matrix_.reset();
    // Bounded whatever the input: a real paste holds a few matrices of up to 64 GPUs.
    if (has(text, "Bandwidth") && matrices_.size() < kMaxMatrices) {
      Matrix m;
      m.bidirectional = has(text, "Bidirectional");
      m.enabled = has(text, "P2P=Enabled");
      m.lineno = lineno;
      matrices_.push_back(std::move(m));
      open_matrix_ = matrices_.size() - 1;
    }
    return;
  }
  if (open_matrix_) {
    if (has(text, "D\\D")) return;  // the column header
    if (auto row = matrix_row(text)) {
      auto& m = matrices_[*open_matrix_];
      for (size_t col = 0; col < row->second.size() && m.off_diagonal.size() < kMaxValues; ++col)
        if (static_cast<int>(col) != row->first) m.off_diagonal.push_back(row->second[col]);
      return;
    }
    open_matrix_.reset();
  }

  // ---- the fabric manager's unit state
  // Every line passes here: one cheap search rules most of them out.
  const bool fm = has(text, "abric") &&
                  (has(text, "fabricmanager") || has(text, "fabric manager") || has(text, "Fabric Manager"));
  if (fm && has(text, ".service")) fm_unit_line_ = lineno;
  if (fm_failed_ || (!fm && !fm_unit_line_)) return;
  const bool unit_failed = has(text, "Active: failed") || has(text, "Active: inactive");
  const bool journal_failed = fm && (has(text, "Failed with result") || has(text, "Failed to start") ||
                                     has(text, "status=1/FAILURE") || has(text, "Main process exited, code=exited"));
  if (!fm_failed_ && (journal_failed || (unit_failed && fm_unit_line_ && lineno - *fm_unit_line_ <= 6)))
    fm_failed_ = Hit{lineno, std::string(text.substr(0, 300))};
}

void PastedBlocks::add_literals(LineLiterals& out) {
  // nvidia-smi topo -m's header, setpci, a gdb/eu-stack frame ("#3 0x..")
  // or py-spy's ("    name (file.py:12)"), a p2pBandwidthLatencyTest
  // matrix's title, the fabric manager.
  for (std::string_view l : {"GPU0", "setpci", "#", " (", "P2P=", "abric"}) out.exact.push_back(l);
  // nvidia-smi -q's memory error sections.
  for (std::string_view l : SmiMemoryBlock::kHeaders) out.exact.push_back(l);
  out.exact.push_back(SmiMemoryBlock::kGpuHeader);
  // A native crash, and PyTorch's deliberate abort that is none.
  for (std::string_view l : CrashStackBlock::kMarkers) out.exact.push_back(l);
  for (std::string_view l : CrashStackBlock::kDeliberate) out.exact.push_back(l);
}

void PastedBlocks::finish(const std::string& source, const std::string& host, EvidenceSet& set, bool nccl_seen) {
  auto add = [&](std::string id, Layer layer, std::string summary, int64_t lineno, std::string excerpt,
                 std::vector<CauseSupport> supports) {
    Finding f;
    f.id = std::move(id);
    f.layer = layer;
    f.severity = Severity::error;
    f.role = FindingRole::primary;
    f.summary = std::move(summary);
    if (!host.empty()) f.subject.host = host;
    f.provenance.push_back(Provenance{source, lineno, std::move(excerpt)});
    f.order = lineno;
    f.supports = std::move(supports);
    set.findings.push_back(std::move(f));
  };

  for (const bool bidirectional : {false, true}) {
    const Matrix *off = nullptr, *on = nullptr;
    for (const auto& m : matrices_)
      if (m.bidirectional == bidirectional && !m.off_diagonal.empty()) (m.enabled ? on : off) = &m;
    if (!off || !on) continue;
    const double without = median(off->off_diagonal), with = median(on->off_diagonal);
    // Enabled P2P is normally several times faster than staging through the
    // host; at under half of it, the DMA between the GPUs is being redirected
    // (ACS to the root complex), translated (IOMMU) or broken (driver).
    if (without <= 0 || with >= 0.5 * without) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%.2f GB/s with P2P enabled vs %.2f GB/s through host memory (median between GPUs)",
                  with, without);
    add("log.p2p_bandwidth_collapse", Layer::hardware,
        std::string("peer-to-peer bandwidth collapses when P2P is enabled: ") + buf, on->lineno,
        std::string(bidirectional ? "Bidirectional" : "Unidirectional") + " P2P=Enabled Bandwidth Matrix: " + buf,
        {{"iommu_blocks_p2p", 12}, {"pcie_acs_p2p_blocked", 6}, {"gpu_driver_p2p_bug", 3}});
    break;
  }
  if (!frames_.empty()) close_stack();
  smi_memory_.finish(source, host, set);
  crash_.finish(source, host, set, nccl_seen);
  if (in_nccl_launch_)
    add("log.stack_in_nccl_launch", Layer::nccl,
        "a pasted stack shows a thread inside NCCL's own launch path on the host (" + in_nccl_launch_->text +
            "): NCCL itself is stuck there, not waiting for a peer (an NCCL defect, or launches blocked behind "
            "CUDA_LAUNCH_BLOCKING / graph capture)",
        in_nccl_launch_->lineno, in_nccl_launch_->text, {{"nccl_bug", 5}, {"cuda_graph_or_stream_misuse", 2}});
  if (acs_enabled_ > 0 && acs_first_enabled_)
    add("log.setpci_acs_enabled", Layer::hardware,
        "ACS is enabled on " + std::to_string(acs_enabled_) + " of " + std::to_string(acs_values_) +
            " PCIe bridge(s) read with setpci (non-zero ACS control): peer-to-peer TLPs are redirected to the root "
            "complex",
        acs_first_enabled_->lineno, acs_first_enabled_->text, {{"pcie_acs_p2p_blocked", 10}});
  if (topo_seen_ && topo_gpus_ >= 2) {
    Finding f;
    f.id = "log.gpu_topology";
    f.layer = Layer::hardware;
    f.severity = Severity::info;
    f.role = FindingRole::context;
    f.summary = "pasted nvidia-smi topo -m: " + std::to_string(topo_gpus_) + " GPU(s), " +
                std::to_string(topo_nics_) + " NIC column(s); GPU pairs over NVLink " +
                std::to_string(topo_nvlink_pairs_) + ", over PCIe only " + std::to_string(topo_pcie_pairs_);
    if (!host.empty()) f.subject.host = host;
    f.provenance.push_back(Provenance{source, topo_line_, "nvidia-smi topo -m"});
    f.order = topo_line_;
    f.fields = {{"gpus", topo_gpus_},
                {"nics", topo_nics_},
                {"nvlink_pairs", topo_nvlink_pairs_},
                {"pcie_pairs", topo_pcie_pairs_}};
    set.findings.push_back(std::move(f));
  }
  if (fm_failed_)
    add("log.fabric_manager_failed", Layer::system_config,
        "the NVIDIA fabric manager service failed or is not running (NVSwitch fabric not set up)", fm_failed_->lineno,
        fm_failed_->text, {{"fabric_manager_not_running", 40}});
}

}  // namespace ccdiag
