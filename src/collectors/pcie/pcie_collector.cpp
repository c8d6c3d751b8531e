#include "collectors/pcie/pcie_collector.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "collectors/pcie/pcie_parse.hpp"

namespace ccdiag {

namespace {

using nlohmann::json;

struct Endpoint {
  std::string bdf;
  std::string role;                 // "gpu" | "nic"
  std::string rdma_device;          // NICs: mlx5_0 (first one on the function)
  std::vector<std::string> chain;   // root port .. endpoint
};

std::string dev_path(const std::string& bdf) { return "/sys/bus/pci/devices/" + bdf; }

std::optional<uint32_t> read_hex_attr(const SysRoot& root, const std::string& bdf, const char* attr) {
  auto v = root.read_line(dev_path(bdf) + "/" + attr);
  if (!v) return std::nullopt;
  return pcie::parse_hex(*v);
}

bool is_gpu(const SysRoot& root, const std::string& bdf) {
  const auto vendor = read_hex_attr(root, bdf, "vendor");
  const auto cls = read_hex_attr(root, bdf, "class");
  return vendor && *vendor == 0x10de && cls && ((*cls >> 8) == 0x0302 || (*cls >> 8) == 0x0300);
}

std::vector<std::string> chain_of(const SysRoot& root, const std::string& bdf) {
  auto target = root.read_link(dev_path(bdf));
  if (!target) return {};
  return pcie::bdf_chain(*target);
}

// "Device Minor:\t 3" from /proc/driver/nvidia/gpus/<bdf>/information.
std::optional<int> nvidia_minor(const SysRoot& root, const std::string& bdf) {
  auto text = root.read_file("/proc/driver/nvidia/gpus/" + bdf + "/information", 16384);
  if (!text) return std::nullopt;
  const size_t at = text->find("Device Minor:");
  if (at == std::string::npos) return std::nullopt;
  const size_t d = text->find_first_of("0123456789", at);
  if (d == std::string::npos) return std::nullopt;
  return std::atoi(text->c_str() + d);
}

json link_of(const SysRoot& root, const std::string& bdf) {
  json j;
  j["bdf"] = bdf;
  if (auto c = read_hex_attr(root, bdf, "class")) j["class"] = *c;
  if (auto v = read_hex_attr(root, bdf, "vendor")) j["vendor"] = *v;
  if (auto d = read_hex_attr(root, bdf, "device")) j["device"] = *d;
  for (const char* attr : {"current_link_speed", "max_link_speed"}) {
    auto s = root.read_line(dev_path(bdf) + "/" + attr);
    if (!s) continue;
    j[std::string(attr) + "_raw"] = *s;
    if (auto g = pcie::parse_link_speed(*s)) j[std::string(attr) + "_gts"] = *g;
    else j[std::string(attr) + "_gts"] = nullptr;  // "Unknown": no link
  }
  for (const char* attr : {"current_link_width", "max_link_width"}) {
    auto s = root.read_line(dev_path(bdf) + "/" + attr);
    if (!s) continue;
    if (auto w = pcie::parse_link_width(*s)) j[attr] = *w;
  }
  return j;
}

Evidence make(const CollectContext& ctx, const char* kind, const std::string& source) {
  Evidence e;
  e.kind = kind;
  e.subject.host = ctx.host;
  e.provenance.source = source;
  return e;
}

}  // namespace

CollectorOutput collect_pcie(const CollectContext& ctx) {
  CollectorOutput out;
  const SysRoot& root = ctx.root;
  auto devices = root.list_dir("/sys/bus/pci/devices");
  if (!devices) {
    Evidence e = make(ctx, "pcie.link", "/sys/bus/pci/devices");
    e.availability = Availability::unavailable(devices.error().one_line());
    out.evidence.push_back(std::move(e));
    out.unchecked.push_back(Unchecked{"PCIe", UncheckedState::skipped, "/sys/bus/pci/devices not readable (" + devices.error().one_line() + ")"});
    return out;
  }

  // 1. The endpoints: NVIDIA GPUs in PCI bus order (= NVML / CUDA_DEVICE_ORDER=PCI_BUS_ID
  //    index), then RDMA NICs from /sys/class/infiniband.
  std::vector<Endpoint> eps;
  for (const auto& bdf : *devices)
    if (is_gpu(root, bdf)) eps.push_back(Endpoint{bdf, "gpu", "", chain_of(root, bdf)});
  const size_t gpu_count = eps.size();
  std::map<std::string, std::vector<std::string>> rdma_by_bdf;
  if (auto ibdevs = root.list_dir("/sys/class/infiniband")) {
    for (const auto& dev : *ibdevs) {
      auto target = root.read_link("/sys/class/infiniband/" + dev + "/device");
      if (!target) continue;
      std::string bdf = target->substr(target->rfind('/') + 1);
      if (pcie::looks_like_bdf(bdf)) rdma_by_bdf[bdf].push_back(dev);
    }
  }
  for (const auto& [bdf, devs] : rdma_by_bdf) eps.push_back(Endpoint{bdf, "nic", devs.front(), chain_of(root, bdf)});

  if (eps.empty()) {
    Evidence e = make(ctx, "pcie.link", "/sys/bus/pci/devices");
    e.availability = Availability::unavailable("no NVIDIA GPU and no RDMA NIC on the PCI bus");
    out.evidence.push_back(std::move(e));
    out.unchecked.push_back(Unchecked{"PCIe paths", UncheckedState::skipped, "no NVIDIA GPU (vendor 0x10de) and no RDMA NIC found"});
  }

  // 2. Pairs that talk peer-to-peer: every GPU with every NIC and every other GPU.
  std::map<std::string, std::vector<std::string>> pairs_of_bridge;  // bridge -> "a<->b"
  auto name_of = [](const Endpoint& e) { return e.role == "nic" ? e.rdma_device + " (" + e.bdf + ")" : "GPU " + e.bdf; };
  for (size_t i = 0; i < gpu_count; ++i) {
    for (size_t k = i + 1; k < eps.size(); ++k) {
      for (const auto& b : pcie::p2p_path_bridges(eps[i].chain, eps[k].chain)) {
        auto& v = pairs_of_bridge[b];
        if (v.size() < 16) v.push_back(name_of(eps[i]) + "<->" + name_of(eps[k]));
      }
    }
  }

  const std::string cmdline = root.read_line("/proc/cmdline").value_or("");
  const auto iommu_cmd = pcie::parse_iommu_cmdline(cmdline);

  // 3. pcie.link per endpoint, with its path and affinity.
  std::set<std::string> on_paths;
  for (size_t i = 0; i < eps.size(); ++i) {
    const auto& ep = eps[i];
    Evidence e = make(ctx, "pcie.link", dev_path(ep.bdf));
    if (ep.role == "gpu") e.subject.gpu = ep.bdf;
    else e.subject.nic = ep.rdma_device;
    e.data["bdf"] = ep.bdf;
    e.data["role"] = ep.role;
    if (ep.role == "gpu") {
      e.data["gpu_index"] = static_cast<int>(i);
      if (auto m = nvidia_minor(root, ep.bdf)) e.data["nvidia_minor"] = *m;
    } else {
      e.data["rdma_devices"] = rdma_by_bdf[ep.bdf];
    }
    if (auto n = root.read_line(dev_path(ep.bdf) + "/numa_node")) e.data["numa_node"] = std::atoi(n->c_str());
    if (auto c = root.read_line(dev_path(ep.bdf) + "/local_cpulist")) e.data["local_cpulist"] = *c;
    if (ep.chain.empty()) {
      // A VM with a flattened tree, or a device link we could not resolve.
      e.data["path"] = json::array({link_of(root, ep.bdf)});
      e.data["path_resolved"] = false;
    } else {
      json path = json::array();
      // Endpoint first, then each bridge up to the root port: the order a reader walks.
      for (auto it = ep.chain.rbegin(); it != ep.chain.rend(); ++it) {
        json hop = link_of(root, *it);
        hop["hop"] = it == ep.chain.rbegin() ? "endpoint" : (std::next(it) == ep.chain.rend() ? "root_port" : "bridge");
        path.push_back(std::move(hop));
        on_paths.insert(*it);
      }
      e.data["path"] = std::move(path);
      e.data["root_port"] = ep.chain.front();
      e.data["path_resolved"] = true;
    }
    if (ep.role == "gpu") {
      // Nearest NIC (NCCL picks the NIC closest to the GPU): lowest topology level.
      static const std::map<std::string, int> rank_of = {{"PIX", 0}, {"PXB", 1}, {"PHB", 2}, {"NODE", 3}, {"SYS", 4}};
      json best;
      int best_rank = 99;
      const auto gpu_numa = e.data.value("numa_node", -1);
      for (size_t k = gpu_count; k < eps.size(); ++k) {
        std::string level = pcie::topology_level(ep.chain, eps[k].chain);
        const int nic_numa = std::atoi(root.read_line(dev_path(eps[k].bdf) + "/numa_node").value_or("-1").c_str());
        if (level == "SYS" && gpu_numa >= 0 && gpu_numa == nic_numa) level = "NODE";
        const int r = rank_of.at(level);
        if (r < best_rank) {
          best_rank = r;
          const bool shared_switch = level == "PIX" || level == "PXB";
          best = {{"nic", eps[k].rdma_device}, {"nic_bdf", eps[k].bdf}, {"level", level},
                  {"shared_switch", shared_switch}, {"same_numa", gpu_numa >= 0 && gpu_numa == nic_numa}};
        }
      }
      if (!best.is_null()) e.data["nearest_nic"] = std::move(best);
    }
    out.evidence.push_back(std::move(e));
  }

  // 4. AER per device on any path (errors are often counted at the link partner).
  bool any_aer = false;
  for (const auto& bdf : on_paths) {
    Evidence e = make(ctx, "pcie.aer", dev_path(bdf) + "/aer_dev_*");
    e.data["bdf"] = bdf;
    bool have = false;
    for (const char* sev : {"correctable", "nonfatal", "fatal"}) {
      auto text = root.read_file(dev_path(bdf) + "/aer_dev_" + sev, 16384);
      if (!text) continue;
      have = true;
      const auto parsed = pcie::parse_aer_file(*text);
      json counters = json::object();
      int64_t sum = 0;
      for (const auto& [name, v] : parsed.counters) {
        counters[name] = v;
        sum += v;
      }
      e.data[sev] = {{"counters", counters}, {"total", parsed.total.value_or(sum)}};
    }
    for (const char* sev : {"cor", "nonfatal", "fatal"}) {
      auto t = root.read_line(dev_path(bdf) + "/aer_rootport_total_err_" + sev);
      if (t) e.data["rootport_total_err_" + std::string(sev)] = std::atoll(t->c_str());
    }
    if (!have) {
      // Firmware-first AER, pci=noaer, or a kernel before 4.19: unknown, not zero.
      e.availability = Availability::unavailable(iommu_cmd.pci_noaer ? "pci=noaer on the kernel command line"
                                                                     : "no aer_dev_* files (AER not enabled by the OS)");
    } else {
      any_aer = true;
    }
    out.evidence.push_back(std::move(e));
  }
  if (!on_paths.empty() && !any_aer)
    out.unchecked.push_back(Unchecked{"PCIe AER counters", UncheckedState::unavailable, "no aer_dev_* files on the GPU/NIC paths (firmware-first AER or pci=noaer)"});

  // 5. ACS on every bridge of the paths (config space beyond 64 bytes needs CAP_SYS_ADMIN).
  size_t acs_unknown = 0;
  for (const auto& bdf : on_paths) {
    const auto cls = read_hex_attr(root, bdf, "class");
    if (!cls || (*cls >> 8) != 0x0604) continue;  // PCI-to-PCI bridges only
    Evidence e = make(ctx, "pcie.acs", dev_path(bdf) + "/config");
    e.data["bdf"] = bdf;
    const auto pit = pairs_of_bridge.find(bdf);
    e.data["p2p_pairs"] = pit == pairs_of_bridge.end() ? json::array() : json(pit->second);
    e.data["on_p2p_path"] = pit != pairs_of_bridge.end();
    auto bytes = root.read_file(dev_path(bdf) + "/config", 4096);
    if (!bytes) {
      e.availability = Availability::unavailable(bytes.error().one_line());
      ++acs_unknown;
    } else {
      const auto cs = pcie::parse_config_space(*bytes);
      e.data["config_bytes"] = cs.size;
      if (cs.port_type) e.data["port_type"] = std::string(to_string(*cs.port_type));
      if (cs.all_ones) {
        e.data["config_all_ones"] = true;
        e.availability = Availability::error("config space reads all-ones (device not responding)");
        ++acs_unknown;
      } else if (!cs.extended_visible) {
        e.availability = Availability::unavailable(
            "config space truncated to " + std::to_string(cs.size) +
            " bytes: ACS needs CAP_SYS_ADMIN (run as root)");
        ++acs_unknown;
      } else if (!cs.acs_present) {
        e.data["acs_capability"] = false;  // no ACS: nothing can redirect
      } else {
        e.data["acs_capability"] = true;
        e.data["acs_cap"] = *cs.acs_cap;
        e.data["acs_ctl"] = *cs.acs_ctl;
        e.data["acs_cap_text"] = pcie::acs_bits_string(*cs.acs_cap);
        e.data["acs_ctl_text"] = pcie::acs_bits_string(*cs.acs_ctl);
        e.data["req_redirect"] = (*cs.acs_ctl & pcie::kAcsReqRedir) != 0;
        e.data["cmplt_redirect"] = (*cs.acs_ctl & pcie::kAcsCmpltRedir) != 0;
      }
    }
    out.evidence.push_back(std::move(e));
  }
  if (acs_unknown)
    out.unchecked.push_back(Unchecked{"PCIe ACS", UncheckedState::unknown, "on " + std::to_string(acs_unknown) +
                                                      " bridge(s): config space beyond 64 bytes needs CAP_SYS_ADMIN"});

  // Endpoint config: a GPU whose config space reads all-ones fell off the bus.
  for (const auto& ep : eps) {
    auto bytes = root.read_file(dev_path(ep.bdf) + "/config", 64);
    if (bytes && pcie::parse_config_space(*bytes).all_ones) {
      for (auto& e : out.evidence)
        if (e.kind == "pcie.link" && e.data.value("bdf", "") == ep.bdf) e.data["config_all_ones"] = true;
    }
  }

  // 6. IOMMU.
  {
    Evidence e = make(ctx, "host.iommu", "/sys/class/iommu, /sys/kernel/iommu_groups, /proc/cmdline");
    json units = json::array();
    if (auto u = root.list_dir("/sys/class/iommu")) units = *u;
    e.data["units"] = units;
    e.data["cmdline"] = {{"intel_iommu", iommu_cmd.intel_iommu}, {"amd_iommu", iommu_cmd.amd_iommu},
                         {"iommu", iommu_cmd.iommu}, {"iommu.passthrough", iommu_cmd.passthrough},
                         {"pcie_acs_override", iommu_cmd.acs_override}, {"pci_noaer", iommu_cmd.pci_noaer}};
    size_t groups = 0;
    if (auto g = root.list_dir("/sys/kernel/iommu_groups")) groups = g->size();
    e.data["group_count"] = groups;
    json devs = json::array();
    bool translated = false, any_type = false;
    for (const auto& ep : eps) {
      json d{{"bdf", ep.bdf}, {"role", ep.role}};
      if (auto link = root.read_link(dev_path(ep.bdf) + "/iommu_group")) {
        const std::string group = link->substr(link->rfind('/') + 1);
        d["group"] = group;
        if (auto t = root.read_line("/sys/kernel/iommu_groups/" + group + "/type")) {
          d["type"] = *t;
          any_type = true;
          if (*t == "DMA" || *t == "DMA-FQ") translated = true;
        }
      }
      devs.push_back(std::move(d));
    }
    e.data["devices"] = devs;
    // Mode: the group types when the kernel has them (5.11+), else the command line.
    std::string mode;
    if (units.empty() && groups == 0) mode = "off";
    else if (any_type) mode = translated ? "translated" : "passthrough";
    else if (iommu_cmd.iommu == "pt" || iommu_cmd.passthrough == "1") mode = "passthrough";
    else if (iommu_cmd.intel_iommu == "on" || iommu_cmd.amd_iommu == "on" || iommu_cmd.iommu == "nopt" ||
             iommu_cmd.passthrough == "0")
      mode = "translated";
    else mode = "unknown";
    e.data["mode"] = mode;
    e.data["translated"] = mode == "translated";
    out.evidence.push_back(std::move(e));
  }
  return out;
}

}  // namespace ccdiag
