#include "collectors/pcie/pcie_findings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace ccdiag {

namespace {

using nlohmann::json;

Finding base(const Evidence& e, const char* id, Severity sev, std::string summary) {
  return finding_from(e, id, Layer::hardware, sev, std::move(summary));
}

std::string fmt_speed(const json& hop, const char* key) {
  const auto it = hop.find(key);
  if (it == hop.end() || it->is_null()) return "Unknown";
  return fmt::format("{:g} GT/s", it->get<double>());
}

void link_findings(const Evidence& e, std::vector<Finding>& out) {
  const auto& d = e.data;
  const std::string role = d.value("role", "");
  const std::string bdf = d.value("bdf", "");
  const std::string who = role == "gpu" ? "GPU " + bdf : "NIC " + e.subject.nic.value_or("") + " (" + bdf + ")";
  if (d.value("config_all_ones", false) && role == "gpu") {
    Finding f = base(e, "pcie.gpu_config_lost", Severity::critical,
                     who + ": config space reads all-ones (the GPU no longer answers on the bus)");
    f.fields = {{"bdf", bdf}};
    f.supports = {{"gpu_fell_off_bus", 50.0}};
    out.push_back(std::move(f));
  }
  const auto path = d.find("path");
  if (path == d.end() || !path->is_array()) return;
  for (size_t i = 0; i < path->size(); ++i) {
    const json& hop = (*path)[i];
    const std::string hop_bdf = hop.value("bdf", "");
    const bool has_speed = hop.contains("current_link_speed_gts") || hop.contains("max_link_speed_gts");
    const auto cw = hop.find("current_link_width"), mw = hop.find("max_link_width");
    const bool widths = cw != hop.end() && mw != hop.end() && cw->is_number() && mw->is_number();
    const bool speed_known = hop.contains("current_link_speed_gts") && hop["current_link_speed_gts"].is_number();
    const bool max_known = hop.contains("max_link_speed_gts") && hop["max_link_speed_gts"].is_number();
    // Link down: speed "Unknown" or width 0 while the port has a maximum.
    if ((has_speed && !speed_known && max_known) || (widths && cw->get<int>() == 0 && mw->get<int>() > 0)) {
      Finding f = base(e, "pcie.link_down", Severity::critical,
                       fmt::format("{}: PCIe link at {} is down (speed {}, width x{})", who, hop_bdf,
                                   fmt_speed(hop, "current_link_speed_gts"), widths ? cw->get<int>() : 0));
      f.fields = {{"bdf", hop_bdf}, {"endpoint", bdf}, {"role", role}};
      f.supports = {{"pcie_link_degraded", 10.0}};
      if (role == "gpu") f.supports.push_back({"gpu_fell_off_bus", 10.0});
      out.push_back(std::move(f));
      continue;
    }
    // A link can only train to what both ends support: compare with the
    // smaller of this device's and its upstream port's maximum (as NCCL does).
    int max_w = widths ? mw->get<int>() : 0;
    double max_s = max_known ? hop["max_link_speed_gts"].get<double>() : 0;
    if (i + 1 < path->size()) {
      const json& up = (*path)[i + 1];
      if (up.contains("max_link_width") && up["max_link_width"].is_number() && up["max_link_width"].get<int>() > 0)
        max_w = std::min(max_w, up["max_link_width"].get<int>());
      if (up.contains("max_link_speed_gts") && up["max_link_speed_gts"].is_number())
        max_s = std::min(max_s, up["max_link_speed_gts"].get<double>());
    }
    const bool lost_width = widths && cw->get<int>() < max_w;
    bool lost_speed = speed_known && max_known && hop["current_link_speed_gts"].get<double>() + 1e-9 < max_s;
    // NVIDIA GPUs drop their link speed (often to Gen1) when idle; the same link
    // is seen from the switch port above. Speed loss on that link is only a
    // fault under load, which one sysfs read cannot tell: context, not a cause.
    const bool gpu_link = role == "gpu" && i <= 1;
    if (!lost_width && !lost_speed) continue;
    if (!lost_width && gpu_link) {
      Finding f = base(e, "pcie.gpu_link_speed_reduced", Severity::info,
                       fmt::format("{}: link at {} runs at {} of {} (normal power saving when the GPU is idle)", who,
                                   hop_bdf, fmt_speed(hop, "current_link_speed_gts"), fmt_speed(hop, "max_link_speed_gts")));
      f.role = FindingRole::context;
      f.fields = {{"bdf", hop_bdf}, {"endpoint", bdf}};
      out.push_back(std::move(f));
      continue;
    }
    Finding f = base(e, "pcie.link_downtrained", lost_width ? Severity::error : Severity::warning,
                     fmt::format("{}: PCIe link at {} trained to x{} {} (both ends capable of x{} {:g} GT/s)", who,
                                 hop_bdf, widths ? cw->get<int>() : 0, fmt_speed(hop, "current_link_speed_gts"), max_w,
                                 max_s));
    f.fields = {{"bdf", hop_bdf}, {"endpoint", bdf}, {"role", role}, {"lost_width", lost_width},
                {"lost_speed", lost_speed}, {"hop", hop.value("hop", "")}};
    if (widths) {
      f.fields["current_width"] = cw->get<int>();
      f.fields["max_width"] = max_w;
    }
    f.supports = {{"pcie_link_degraded", lost_width ? 60.0 : 8.0}};  // lost lanes are measured, not inferred
    out.push_back(std::move(f));
  }
}

void aer_findings(const Evidence& e, const std::map<std::string, std::string>& gpu_of_hop,
                  std::vector<Finding>& out) {
  const auto& d = e.data;
  const std::string bdf = d.value("bdf", "");
  const auto it = gpu_of_hop.find(bdf);
  const bool gpu_path = it != gpu_of_hop.end();
  auto nonzero = [&](const char* sev) {
    json names = json::object();
    if (!d.contains(sev)) return names;
    const json counters = d[sev].value("counters", json::object());  // items() must not outlive it
    for (const auto& [k, v] : counters.items())
      if (v.is_number_integer() && v.get<int64_t>() > 0) names[k] = v;
    return names;
  };
  auto total = [&](const char* sev) -> int64_t {
    if (!d.contains(sev)) return 0;
    return d[sev].value("total", int64_t{0});
  };
  if (total("fatal") > 0) {
    Finding f = base(e, "pcie.aer_fatal", Severity::critical,
                     fmt::format("PCIe {}: {} uncorrectable fatal AER error(s) since boot{}", bdf, total("fatal"),
                                 gpu_path ? " on the path of GPU " + it->second : ""));
    f.fields = {{"bdf", bdf}, {"fatal", nonzero("fatal")}, {"count", total("fatal")}};
    f.supports = {{"pcie_link_degraded", 8.0}};
    if (gpu_path) {
      f.subject.gpu = it->second;
      f.supports.push_back({"gpu_fell_off_bus", 6.0});  // SDES/fatal on the GPU path precedes Xid 79
    }
    out.push_back(std::move(f));
  }
  if (total("nonfatal") > 0) {
    Finding f = base(e, "pcie.aer_nonfatal", Severity::error,
                     fmt::format("PCIe {}: {} uncorrectable non-fatal AER error(s) since boot", bdf, total("nonfatal")));
    f.fields = {{"bdf", bdf}, {"nonfatal", nonzero("nonfatal")}, {"count", total("nonfatal")}};
    if (gpu_path) f.subject.gpu = it->second;
    f.supports = {{"pcie_link_degraded", 3.0}};
    out.push_back(std::move(f));
  }
  // A handful of correctable errors is normal; many mean replays on a marginal link.
  constexpr int64_t kCorrectableNotable = 100;
  if (total("correctable") >= kCorrectableNotable) {
    Finding f = base(e, "pcie.aer_correctable", Severity::warning,
                     fmt::format("PCIe {}: {} correctable AER errors since boot (link replays)", bdf, total("correctable")));
    f.fields = {{"bdf", bdf}, {"correctable", nonzero("correctable")}, {"count", total("correctable")}};
    f.supports = {{"pcie_link_degraded", 2.0}};
    out.push_back(std::move(f));
  }
}

}  // namespace

std::vector<Finding> pcie_findings(const std::vector<Evidence>& evidence) {
  std::vector<Finding> out;
  std::map<std::string, std::string> gpu_of_hop;  // device on a GPU path -> GPU BDF
  for (const auto& e : evidence) {
    if (e.kind != "pcie.link" || !e.availability.is_ok() || e.data.value("role", "") != "gpu") continue;
    for (const auto& hop : e.data.value("path", json::array())) gpu_of_hop[hop.value("bdf", "")] = e.data.value("bdf", "");
  }
  for (const auto& e : evidence) {
    if (!e.availability.is_ok()) continue;
    if (e.kind == "pcie.link") link_findings(e, out);
    else if (e.kind == "pcie.aer") aer_findings(e, gpu_of_hop, out);
    else if (e.kind == "pcie.acs") {
      const auto& d = e.data;
      if (!d.value("on_p2p_path", false)) continue;
      const bool rr = d.value("req_redirect", false), cr = d.value("cmplt_redirect", false);
      if (!rr && !cr) continue;
      const std::string bdf = d.value("bdf", "");
      const auto pairs = d.value("p2p_pairs", json::array());
      Finding f = base(e, "pcie.acs_redirect", Severity::error,
                       fmt::format("ACS {}{} enabled on bridge {}: peer-to-peer traffic ({}{}) is forced up to the root complex",
                                   rr ? "ReqRedir" : "", rr && cr ? "+CmpltRedir" : (cr ? "CmpltRedir" : ""), bdf,
                                   pairs.empty() ? "" : pairs[0].get<std::string>(),
                                   pairs.size() > 1 ? fmt::format(" and {} more", pairs.size() - 1) : ""));
      f.fields = {{"bdf", bdf}, {"acs_ctl", d.value("acs_ctl_text", "")}, {"p2p_pairs", pairs},
                  {"fix", "setpci -s " + bdf + " ECAP_ACS+0x6.w=0000 (bare metal)"}};
      // Measured on the very path the traffic takes: strong (prior 0.02 -> ~0.55 alone).
      f.supports = {{"pcie_acs_p2p_blocked", 60.0}};
      out.push_back(std::move(f));
    } else if (e.kind == "host.iommu") {
      if (!e.data.value("translated", false)) continue;
      json translated = json::array();
      for (const auto& dev : e.data.value("devices", json::array()))
        if (dev.value("type", "") == "DMA" || dev.value("type", "") == "DMA-FQ") translated.push_back(dev.value("bdf", ""));
      Finding f = base(e, "host.iommu_translated", Severity::warning,
                       translated.empty()
                           ? "IOMMU translates DMA (" + e.data["cmdline"].value("intel_iommu", "") +
                                 " without iommu=pt): GPU peer-to-peer and GPUDirect RDMA go through translation"
                           : fmt::format("IOMMU translates DMA for {} GPU/NIC device(s) (group type DMA): peer-to-peer "
                                         "and GPUDirect RDMA go through translation",
                                         translated.size()));
      f.layer = Layer::hardware;
      f.fields = {{"mode", e.data.value("mode", "")}, {"translated_devices", translated},
                  {"fix", "boot with iommu=pt (or intel_iommu=off / amd_iommu=off) on bare metal"}};
      f.supports = {{"iommu_blocks_p2p", translated.empty() ? 10.0 : 40.0}};
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace ccdiag
