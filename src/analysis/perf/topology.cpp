#include "analysis/perf/topology.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ccdiag::perf {

using nlohmann::json;

double pcie_gbs(double gts, int lanes) {
  const double enc = gts <= 5.0 + 1e-9 ? 8.0 / 10.0 : 128.0 / 130.0;
  return gts * lanes * enc / 8.0;
}

double nvlink_link_gbs(int version) {
  // NVLink 2/3/4 links carry 25 GB/s per direction (V100 6, A100 12, H100 18 links:
  // 300/600/900 GB/s bidirectional); NVLink 5 doubles it.
  if (version >= 5) return 50.0;
  if (version == 1) return 20.0;
  return 25.0;
}

std::optional<double> ib_lane_gbps(const std::string& speed) {
  static const std::map<std::string, double> kLane = {{"SDR", 2.5}, {"DDR", 5}, {"QDR", 10}, {"FDR10", 10},
                                                     {"FDR", 14.0625}, {"EDR", 25}, {"HDR", 50}, {"NDR", 100},
                                                     {"XDR", 200}};
  auto it = kLane.find(speed);
  if (it == kLane.end()) return std::nullopt;
  return it->second;
}

namespace {

// NVLink per SXM model, by PCI device id (NVIDIA product briefs: V100 6 links
// NVLink2, A100 12 NVLink3, H100/H200 18 NVLink4, H800 8 NVLink4, B200 18 NVLink5).
std::pair<int, int> nvlink_of_model(int device) {
  switch (device) {
    case 0x1db1: case 0x1db5: return {6, 2};
    case 0x20b0: case 0x20b2: case 0x20b3: return {12, 3};
    case 0x2330: case 0x2335: return {18, 4};
    case 0x2324: return {8, 4};
    case 0x2901: return {18, 5};
    default: return {0, 0};
  }
}

// The bottleneck hop of a device's path to its root port. Widths as trained now;
// speed at its maximum, because idle GPUs clock their links down (Gen1 at idle is
// normal, see docs/probe.md) and one sysfs read cannot tell idle from downtrained.
std::optional<PciePath> path_of(const json& d) {
  const auto p = d.find("path");
  if (p == d.end() || !p->is_array() || p->empty()) return std::nullopt;
  PciePath out;
  out.bdf = d.value("bdf", "");
  double best_present = 1e18, best_nominal = 1e18;
  for (size_t i = 0; i < p->size(); ++i) {
    const json& hop = (*p)[i];
    if (hop.value("hop", "") == "root_port") continue;  // the root port's link is the hop below it
    auto num = [&](const json& h, const char* k) -> double {
      return h.contains(k) && h[k].is_number() ? h[k].get<double>() : 0.0;
    };
    double max_s = num(hop, "max_link_speed_gts");
    int max_w = static_cast<int>(num(hop, "max_link_width"));
    const int cur_w = static_cast<int>(num(hop, "current_link_width"));
    if (i + 1 < p->size()) {  // a link trains only to what both ends support
      const json& up = (*p)[i + 1];
      if (num(up, "max_link_width") > 0) max_w = std::min(max_w, static_cast<int>(num(up, "max_link_width")));
      if (num(up, "max_link_speed_gts") > 0) max_s = std::min(max_s, num(up, "max_link_speed_gts"));
    }
    if (max_s <= 0 || max_w <= 0 || cur_w <= 0) continue;
    const double present = pcie_gbs(max_s, std::min(cur_w, max_w)), nominal = pcie_gbs(max_s, max_w);
    if (present < best_present) {
      best_present = present;
      out.worst_hop = fmt::format("{} x{} of x{} at {:g} GT/s", hop.value("bdf", "?"), cur_w, max_w, max_s);
    }
    best_nominal = std::min(best_nominal, nominal);
  }
  if (best_present > 1e17) return std::nullopt;
  out.present_gbs = best_present;
  out.nominal_gbs = best_nominal;
  out.downtrained = best_present + 1e-9 < best_nominal;
  return out;
}

}  // namespace

HostTopology topology_from_evidence(const std::vector<Evidence>& evidence, const std::string& host) {
  HostTopology t;
  t.host = host;
  bool saw_pcie = false, saw_rdma = false, saw_peermem = false;
  std::map<std::string, NicInfo> nic_pcie;  // rdma device -> pcie path
  std::map<int, std::pair<int, int>> nvl;   // gpu index -> (active, total)
  std::map<int, int> nvl_version;
  for (const auto& e : evidence) try {
    if (e.subject.host && *e.subject.host != host) continue;
    const json& d = e.data;
    if (e.kind == "pcie.link" && e.availability.is_ok()) {
      saw_pcie = true;
      if (d.value("role", "") == "gpu") {
        GpuInfo g;
        g.bdf = d.value("bdf", "");
        g.index = d.value("gpu_index", -1);
        if (auto p = path_of(d)) g.pcie = *p;
        if (d.contains("path") && d["path"].is_array() && !d["path"].empty() && d["path"][0].contains("device") &&
            d["path"][0]["device"].is_number_integer())
          g.pci_device = d["path"][0]["device"].get<int>();
        std::tie(g.model_links, g.model_version) = nvlink_of_model(g.pci_device);
        if (d.contains("nearest_nic") && d["nearest_nic"].is_object()) {
          g.nearest_nic = d["nearest_nic"].value("nic", "");
          g.nic_level = d["nearest_nic"].value("level", "");
        }
        t.gpus.push_back(std::move(g));
      } else if (d.value("role", "") == "nic") {
        if (auto p = path_of(d))
          if (d.contains("rdma_devices") && d["rdma_devices"].is_array())
            for (const auto& r : d["rdma_devices"])
              if (r.is_string()) nic_pcie[r.get<std::string>()].pcie = *p;
      }
    } else if (e.kind == "rdma.port" && e.availability.is_ok()) {
      saw_rdma = true;
      NicInfo n;
      n.device = d.value("device", e.subject.nic.value_or(""));
      n.port = d.value("port", 1);
      n.state = d.value("state_raw", d.value("state", ""));
      n.link_layer = d.value("link_layer", "");
      n.hca_type = d.value("hca_type", "");
      n.speed = d.value("speed", "");
      n.rate_gbps = d.value("rate_gbps", 0.0);
      const int lanes = d.value("lanes", 0);
      n.nominal_rate_gbps = n.rate_gbps;
      // A 4X port trained at 1X/2X keeps its lane speed: nominal = 4 lanes of it.
      if (auto lane = ib_lane_gbps(n.speed); lane && lanes > 0 && lanes < 4) n.nominal_rate_gbps = *lane * 4;
      t.nics.push_back(std::move(n));
    } else if (e.kind == "host.peermem" && e.availability.is_ok()) {
      saw_peermem = true;
      if (d.contains("gdr_possible") && d["gdr_possible"].is_boolean()) t.gdr = d["gdr_possible"].get<bool>();
    } else if (e.kind == "nvlink.link" && e.availability.is_ok()) {
      const int gi = d.value("gpu_index", -1);
      auto& [act, tot] = nvl[gi];
      ++tot;
      if (d.value("active", false)) ++act;
      nvl_version[gi] = std::max(nvl_version[gi], d.value("version", 0));
    }
  } catch (const json::exception&) {
    // An item with fields of unexpected types (a hand-edited or foreign bundle) bounds nothing.
    t.missing.push_back(e.kind + " (malformed item)");
  }
  // Same HCA type on one host: the best trained rate is what each port can do.
  for (auto& n : t.nics) {
    for (const auto& o : t.nics)
      if (o.hca_type == n.hca_type && !n.hca_type.empty()) n.nominal_rate_gbps = std::max(n.nominal_rate_gbps, o.rate_gbps);
    auto it = nic_pcie.find(n.device);
    if (it != nic_pcie.end()) n.pcie = it->second.pcie;
  }
  if (!nvl.empty()) {
    t.nvlink_known = true;
    for (auto& g : t.gpus) {
      auto it = nvl.find(g.index);
      if (it == nvl.end()) continue;
      g.nvlinks_active = it->second.first;
      g.nvlinks_total = it->second.second;
      g.nvlink_version = nvl_version[g.index];
    }
  }
  std::sort(t.gpus.begin(), t.gpus.end(), [](const GpuInfo& a, const GpuInfo& b) { return a.bdf < b.bdf; });
  if (!saw_pcie) t.missing.push_back("pcie.link");
  if (!saw_rdma) t.missing.push_back("rdma.port");
  if (!saw_peermem) t.missing.push_back("host.peermem");
  if (nvl.empty()) t.missing.push_back("nvlink.link");
  return t;
}

std::string HostTopology::fingerprint() const {
  // Nominal parts only: a baseline stays comparable when a link later downtrains.
  std::string s = fmt::format("gpus={};", gpus.size());
  for (const auto& g : gpus)
    s += fmt::format("g:{:.0f}:{}:{};", g.pcie.nominal_gbs, g.nvlinks_total, g.nvlink_version);
  for (const auto& n : nics) s += fmt::format("n:{}:{:.0f};", n.hca_type, n.nominal_rate_gbps);
  s += gdr ? (*gdr ? "gdr" : "nogdr") : "gdr?";
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

}  // namespace ccdiag::perf
