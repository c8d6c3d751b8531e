#include "analysis/perf/rdma_counters.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/perf/perf_analysis.hpp"

namespace ccdiag::perf {

RdmaCounterAnalysis analyze_rdma_counters(const std::vector<Evidence>& evidence, const RdmaCounterOptions& o) {
  RdmaCounterAnalysis a;
  for (const auto& e : evidence) {
    if (e.kind != "rdma.counters" || !e.data.is_object()) continue;
    const auto& d = e.data;
    const double interval = d.value("interval_s", 0.0);
    if (!d.value("sampled_twice", false) || interval <= 0) {
      ++a.single_sample;
      continue;
    }
    PortRate p;
    p.host = e.subject.host.value_or("");
    p.device = d.value("device", e.subject.nic.value_or(""));
    p.port = d.value("port", e.subject.port.value_or(0));
    p.interval_s = interval;
    for (const char* group : {"counters", "hw_counters"}) {
      if (!d.contains(group) || !d[group].is_object()) continue;
      for (const auto& [name, c] : d[group].items()) {
        if (!c.is_object()) continue;
        const int64_t delta = c.value("delta", int64_t{0});
        const std::string cls = c.value("class", "");
        if (delta > 0 && (cls == "congestion" || cls == "signal" || cls == "loss")) p.grown[name] = delta;
        if (name == "port_xmit_wait" && delta > 0) p.xmit_wait_per_s = static_cast<double>(delta) / interval;
      }
    }
    a.ports.push_back(std::move(p));
  }
  if (static_cast<int>(a.ports.size()) < o.min_ports) {
    if (!a.ports.empty() || a.single_sample > 0)
      a.notes.push_back(fmt::format("{} RDMA port(s) sampled twice, {} once: congestion needs {} ports sampled twice to compare",
                                    a.ports.size(), a.single_sample, o.min_ports));
    return a;
  }
  std::vector<double> r;
  for (const auto& p : a.ports) r.push_back(p.xmit_wait_per_s);
  const double med = median(r);
  const double m = std::max({mad(r), o.mad_floor * med, o.min_rate});
  for (auto& p : a.ports) {
    p.z = 0.6745 * (p.xmit_wait_per_s - med) / m;
    p.congested = p.z > o.z_threshold && p.xmit_wait_per_s >= o.min_ratio * med && p.xmit_wait_per_s >= o.min_rate;
  }
  return a;
}

std::vector<Finding> rdma_counter_findings(const RdmaCounterAnalysis& a) {
  std::vector<Finding> out;
  std::vector<double> r;
  for (const auto& p : a.ports) r.push_back(p.xmit_wait_per_s);
  const double med = median(r);
  for (const auto& p : a.ports) {
    if (!p.congested) continue;
    Finding f;
    f.id = "perf.nic_congested";
    f.layer = Layer::transport;
    f.severity = Severity::warning;
    f.subject.host = p.host;
    f.subject.nic = p.device;
    f.subject.port = p.port;
    std::string grown;
    for (const auto& [n, d] : p.grown) grown += fmt::format("{}{} +{}", grown.empty() ? "" : ", ", n, d);
    f.summary = fmt::format("RDMA port {} {}/{}: port_xmit_wait grows {:.0f}/s over {:g} s, {:.1f}x the median of {} ports (z {:.1f}): "
                            "it waits for credit to send, a slow or congested link or peer ({})",
                            p.host, p.device, p.port, p.xmit_wait_per_s, p.interval_s, med > 0 ? p.xmit_wait_per_s / med : 0.0,
                            a.ports.size(), p.z, grown);
    f.fields = {{"xmit_wait_per_s", p.xmit_wait_per_s}, {"median_per_s", med}, {"z", p.z}, {"interval_s", p.interval_s}, {"grown", p.grown}};
    f.supports = {{"slow_link_or_nic", 4.0}};
    out.push_back(std::move(f));
  }
  return out;
}

nlohmann::json rdma_counter_json(const RdmaCounterAnalysis& a) {
  nlohmann::json ports = nlohmann::json::array();
  for (const auto& p : a.ports)
    ports.push_back({{"host", p.host}, {"device", p.device}, {"port", p.port}, {"interval_s", p.interval_s},
                     {"xmit_wait_per_s", p.xmit_wait_per_s}, {"grown", p.grown}, {"z", p.z}, {"congested", p.congested}});
  return {{"ports", ports}, {"single_sample", a.single_sample}, {"notes", a.notes}};
}

}  // namespace ccdiag::perf
