#include "fleet/prom.hpp"

#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "ccdiag/evidence_kinds.hpp"
#include "report/prom_text.hpp"

namespace ccdiag {

namespace {

using Labels = PromLabels;

std::string s_field(const nlohmann::json& d, std::initializer_list<const char*> names) {
  if (!d.is_object()) return {};
  for (const char* n : names)
    if (auto it = d.find(n); it != d.end() && it->is_string()) return it->get<std::string>();
  return {};
}

std::optional<double> n_field(const nlohmann::json& d, std::initializer_list<const char*> names) {
  if (!d.is_object()) return std::nullopt;
  for (const char* n : names)
    if (auto it = d.find(n); it != d.end() && it->is_number()) return it->get<double>();
  return std::nullopt;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "0000:3b:00.0" and "0000:3B:00.0" name one device; Xid lines print "0000:3b:00".
std::string norm_bdf(std::string b) {
  for (auto& c : b) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (b.size() == 10) b += ".0";
  return b;
}

struct GpuId {
  std::string index, uuid, bdf;
};

}  // namespace

std::string render_prom(const Report& r, const EvidenceSet& set, const PromContext& ctx) {
  PromText m;
  m.set("ccdiag_run_timestamp_seconds", "gauge", kRunTimestampHelp,
        {{"mode", ctx.mode}}, ctx.run_timestamp_s);
  m.set("ccdiag_run_duration_seconds", "gauge", "Duration of the last ccdiag run.", {{"mode", ctx.mode}}, ctx.run_duration_s);

  std::set<std::string> failed;
  for (const auto& e : set.evidence)
    if (!e.availability.is_ok()) failed.insert(e.kind);
  for (const auto& c : ctx.collectors) {
    bool ok = true;
    for (const auto& u : set.unchecked)
      if (u.what.find(c) != std::string::npos) ok = false;
    m.set("ccdiag_probe_success", "gauge", "1 when the probe ran, 0 when it was skipped or failed (reason in the bundle).",
          {{"probe", c}}, ok ? 1 : 0);
  }
  m.set("ccdiag_unchecked_probes", "gauge", "Probes that could not run in the last run.", {}, static_cast<double>(set.unchecked.size()));

  const auto& v = r.verdict;
  std::string culprit_kind = v.culprit.gpu ? "gpu" : v.culprit.nic ? "nic" : v.culprit.rank ? "rank" : v.culprit.host ? "host" : "none";
  m.set("ccdiag_verdict_info", "gauge", "The last verdict (catalogue values only); value is always 1.",
        {{"root_cause", v.root_cause}, {"layer", v.layer ? std::string(to_string(*v.layer)) : ""}, {"culprit_kind", culprit_kind}}, 1);
  m.set("ccdiag_verdict_confidence_ratio", "gauge", "Confidence of the last verdict, 0 to 1.", {{"root_cause", v.root_cause}},
        v.confidence);

  // GPU identity by PCI address, to label Xid and throttle series like dcgm-exporter.
  std::map<std::string, GpuId> gpus;
  for (const auto& e : set.evidence) {
    if (!starts_with(e.kind, "gpu.") || !e.availability.is_ok()) continue;
    std::string bdf = s_field(e.data, {"bdf"});
    if (bdf.empty() && e.subject.gpu && e.subject.gpu->size() >= 10 && (*e.subject.gpu)[4] == ':') bdf = *e.subject.gpu;
    if (bdf.empty()) continue;
    GpuId& g = gpus[norm_bdf(bdf)];
    g.bdf = norm_bdf(bdf);
    if (auto i = n_field(e.data, {"index"})) g.index = fmt::format("{}", static_cast<int64_t>(*i));
    if (auto u = s_field(e.data, {"uuid"}); !u.empty()) g.uuid = u;
  }
  auto gpu_labels = [&](const std::string& bdf_in) {
    const std::string b = norm_bdf(bdf_in);
    auto it = gpus.find(b);
    return Labels{{"gpu", it != gpus.end() ? it->second.index : ""}, {"UUID", it != gpus.end() ? it->second.uuid : ""}, {"pci_bus_id", b}};
  };

  bool kernel_seen = false;
  for (const auto& e : set.evidence)
    if (e.kind == "kernel.log" || e.kind == "kernel.source") kernel_seen = kernel_seen || e.availability.is_ok();
  for (const auto& f : set.findings) {
    if (f.id == "kernel.xid" && f.fields.is_object() && f.fields.contains("xid")) {
      // Typed access: value() throws when a bundle's field is not a string.
      const bool pci = f.fields.is_object() && f.fields.contains("pci") && f.fields["pci"].is_string();
      Labels l = gpu_labels(pci ? f.fields["pci"].get<std::string>() : f.subject.gpu.value_or(""));
      l.push_back({"xid", std::to_string(f.fields["xid"].get<int>())});
      m.set("ccdiag_gpu_xid_events_total", "counter", "NVIDIA Xid events in the kernel log since boot.", l, 1, true);
    } else if (f.id == "kernel.gpu_fell_off_bus") {
      m.set("ccdiag_gpu_fallen_off_bus", "gauge", "1 when the kernel log says the GPU has fallen off the bus.",
            gpu_labels(f.subject.gpu.value_or("")), 1);
    }
  }
  if (kernel_seen && gpus.empty() && set.findings_with("kernel.xid").empty())
    m.set("ccdiag_kernel_log_xid_events", "gauge", "Xid events found in the kernel log read by the last run (all GPUs).", {}, 0);

  std::map<std::string, int> nvlinks;  // gpu -> active links
  for (const auto& e : set.evidence) {
    if (!e.availability.is_ok()) continue;
    const auto& d = e.data;
    if (starts_with(e.kind, "gpu.")) {
      const std::string bdf = norm_bdf(s_field(d, {"bdf"}).empty() ? e.subject.gpu.value_or("") : s_field(d, {"bdf"}));
      for (const char* key : {"clocks_event_reasons"}) {  // gpu.device (nvmlDeviceGetCurrentClocksEventReasons)
        auto it = d.find(key);
        if (it == d.end()) continue;
        std::vector<std::pair<std::string, bool>> reasons;
        if (it->is_array()) {
          for (const auto& x : *it)
            if (x.is_string()) reasons.push_back({x.get<std::string>(), true});
        } else if (it->is_object()) {
          for (const auto& [name, on] : it->items())
            if (on.is_boolean()) reasons.push_back({name, on.get<bool>()});
        }
        for (const auto& [reason, on] : reasons) {
          Labels l = gpu_labels(bdf);
          l.push_back({"reason", reason});
          m.set("ccdiag_gpu_throttle_active", "gauge", "1 while a clock-event (throttle) reason is set on the GPU.", l, on ? 1 : 0);
        }
      }
    } else if (e.kind == "nvlink.link") {
      // One item per link (ccdiag/evidence_kinds.hpp): counted per GPU below.
      const auto l = contract::NvlinkLink::parse(d);
      const std::string gpu = e.subject.gpu.value_or("");
      if (l.active) nvlinks[gpu] += *l.active ? 1 : 0;
      for (const auto& [type, x] : l.counters) {
        Labels lb = gpu_labels(gpu);
        lb.push_back({"nvlink", l.link ? std::to_string(*l.link) : "all"});
        lb.push_back({"type", type});
        m.set("ccdiag_gpu_nvlink_errors_total", "counter", "NVLink error counters (NVML).", lb, static_cast<double>(x), true);
      }
    } else if (e.kind == "pcie.link") {
      // The endpoint's own link (path[0]); downtrained: any link on its path lost lanes.
      const auto link = contract::PcieLink::parse(d);
      const auto* ep = link.endpoint();
      if (!ep) continue;
      const std::string bdf = norm_bdf(link.bdf.empty() ? e.subject.gpu.value_or("") : link.bdf);
      const std::string cls = link.role.empty() ? "gpu" : link.role;
      auto lbl = [&](const char* kind) { return Labels{{"pci_bus_id", bdf}, {"class", cls}, {"kind", kind}}; };
      if (ep->current_width) m.set("ccdiag_pcie_link_width", "gauge", "PCIe link width in lanes.", lbl("current"), *ep->current_width);
      if (ep->max_width) m.set("ccdiag_pcie_link_width", "gauge", "PCIe link width in lanes.", lbl("max"), *ep->max_width);
      if (ep->current_gts)
        m.set("ccdiag_pcie_link_speed_transfers_per_second", "gauge", "PCIe link speed in transfers per second.", lbl("current"),
              *ep->current_gts * 1e9);
      if (ep->max_gts)
        m.set("ccdiag_pcie_link_speed_transfers_per_second", "gauge", "PCIe link speed in transfers per second.", lbl("max"),
              *ep->max_gts * 1e9);
      if (ep->current_width && ep->max_width) {
        bool down = false;
        for (const auto& x : link.degraded()) down = down || x.lost_width || x.down;
        m.set("ccdiag_pcie_link_downtrained", "gauge", "1 when a PCIe link on the device's path runs below its maximum width.",
              {{"pci_bus_id", bdf}, {"class", cls}}, down ? 1 : 0);
      }
    } else if (e.kind == "rdma.counters") {
      const auto c = contract::RdmaCounters::parse(d);
      if (!c.sampled_twice) continue;
      const std::string dev = e.subject.nic.value_or(c.device);
      const std::string port = std::to_string(e.subject.port.value_or(c.port.value_or(1)));
      for (const auto& [name, v] : c.counters)
        if (v.delta)
          m.set("ccdiag_ib_port_counter_increase", "gauge", "Increase of an IB port counter over the probe window.",
                {{"device", dev}, {"port", port}, {"counter", name}}, static_cast<double>(*v.delta));
    }
  }
  for (const auto& [gpu, active] : nvlinks)
    m.set("ccdiag_gpu_nvlink_links_active", "gauge", "Active NVLink links of the GPU.", gpu_labels(gpu), active);
  return m.text();
}

}  // namespace ccdiag
