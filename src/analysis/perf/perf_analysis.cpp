#include "analysis/perf/perf_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

namespace ccdiag::perf {

using nlohmann::json;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

double mad(const std::vector<double>& v) {
  const double m = median(v);
  std::vector<double> d;
  d.reserve(v.size());
  for (double x : v) d.push_back(std::fabs(x - m));
  return median(d);
}

namespace {

constexpr int64_t kPlateauMinBytes = 256LL << 20;  // smaller tops do not reach peak (nccl-tests#212)

std::string human_size(int64_t b) {
  if (b >= (1LL << 30) && b % (1LL << 30) == 0) return fmt::format("{}G", b >> 30);
  if (b >= (1LL << 20) && b % (1LL << 20) == 0) return fmt::format("{}M", b >> 20);
  if (b >= (1LL << 10) && b % (1LL << 10) == 0) return fmt::format("{}K", b >> 10);
  return std::to_string(b);
}

bool judged_collective(const std::string& c) { return c == "all_reduce" || c == "all_gather" || c == "reduce_scatter"; }

// The GPUs of `t` the run used: matched by bus id when the device lines carry
// one ("0000:3b:00" from >= 2.14.1), else the first `n` in bus order.
std::vector<const GpuInfo*> used_gpus(const PerfRun& run, const HostTopology& t, size_t n) {
  std::vector<const GpuInfo*> out;
  for (const auto& d : run.devices) {
    if (d.host != t.host || d.bus.find(':') == std::string::npos) continue;
    for (const auto& g : t.gpus)
      if (g.bdf.rfind(d.bus, 0) == 0 && std::find(out.begin(), out.end(), &g) == out.end()) out.push_back(&g);
  }
  if (out.empty())
    for (size_t i = 0; i < t.gpus.size() && i < n; ++i) out.push_back(&t.gpus[i]);
  return out;
}

struct Channel {
  double present = 0, nominal = 0;
  std::string terms, part, cause;
};

// Which NIC each GPU of the host drives: its nearest NIC while that one is
// free, else the next free one, and round-robin once every NIC has a GPU (NCCL
// spreads channels over NICs the same way). Returns the NIC and how many GPUs share it.
std::pair<const NicInfo*, int> nic_for(const HostTopology& t, const GpuInfo& g) {
  std::vector<const NicInfo*> act;
  for (const auto& n : t.nics)
    if (n.active()) act.push_back(&n);
  if (act.empty()) return {nullptr, 1};
  std::map<const NicInfo*, int> load;
  const NicInfo* mine = nullptr;
  for (const auto& o : t.gpus) {
    const NicInfo* pick = nullptr;
    for (const auto* n : act)
      if (n->device == o.nearest_nic && load[n] == 0) pick = n;
    if (!pick) {
      int best = 1 << 30;
      for (const auto* n : act)
        if (load[n] < best) best = load[n], pick = n;
    }
    ++load[pick];
    if (&o == &g) mine = pick;
  }
  if (!mine) mine = act.front();
  return {mine, std::max(1, load[mine])};
}

// One GPU's share of the network: its NIC's rate shared by the GPUs driving it,
// its own PCIe path and the NIC's PCIe path, whichever is smallest.
Channel channel(const HostTopology& t, const GpuInfo& g, size_t /*gpu_pos*/) {
  Channel c;
  const auto [nic, share] = nic_for(t, g);
  struct Term {
    double present, nominal;
    std::string text, part, cause;
  };
  std::vector<Term> terms;
  if (nic)
    terms.push_back({nic->rate_gbps / 8.0 / share, nic->nominal_rate_gbps / 8.0 / share,
                     fmt::format("NIC {} {:g} Gb/s / 8{}", nic->device, nic->rate_gbps, share > 1 ? fmt::format(" / {} GPUs", share) : ""),
                     fmt::format("NIC {} port {} at {:g} Gb/s of {:g} Gb/s", nic->device, nic->port, nic->rate_gbps, nic->nominal_rate_gbps),
                     ""});
  if (g.pcie.nominal_gbs > 0)
    terms.push_back({g.pcie.present_gbs, g.pcie.nominal_gbs, fmt::format("GPU {} PCIe {:.1f}", g.bdf, g.pcie.present_gbs),
                     fmt::format("GPU {} PCIe link downtrained ({})", g.bdf, g.pcie.worst_hop), "pcie_link_degraded"});
  if (nic && nic->pcie && nic->pcie->nominal_gbs > 0)
    terms.push_back({nic->pcie->present_gbs, nic->pcie->nominal_gbs,
                     fmt::format("NIC {} PCIe {:.1f}", nic->device, nic->pcie->present_gbs),
                     fmt::format("NIC {} PCIe link downtrained ({})", nic->device, nic->pcie->worst_hop), "pcie_link_degraded"});
  if (terms.empty()) return c;
  c.present = 1e18;
  c.nominal = 1e18;
  const Term* bind = nullptr;
  for (const auto& x : terms) {
    if (x.present < c.present) c.present = x.present, bind = &x;
    c.nominal = std::min(c.nominal, x.nominal);
    c.terms += (c.terms.empty() ? "" : ", ") + x.text;
  }
  if (bind && c.present + 1e-6 < c.nominal) c.part = bind->part, c.cause = bind->cause;
  return c;
}

}  // namespace

RunAnalysis measure(const PerfRun& run) {
  RunAnalysis a;
  a.run = &run;
  const auto hosts = run.hosts();
  std::map<int64_t, std::vector<double>> bw;
  if (run.tool == Tool::nccl_tests) {
    for (const auto& r : run.rows) {
      if (auto b = r.busbw()) bw[r.size_bytes].push_back(*b);
      if (auto t = r.time_us(); t && (!a.latency_floor_us || *t < *a.latency_floor_us))
        a.latency_floor_us = *t, a.latency_floor_size = r.size_bytes;
      for (const SideResult* s : {&r.oop, &r.ip})
        if (s->wrong && *s->wrong > 0) {
          a.wrong_total += *s->wrong;
          if (r.line && (a.wrong_lines.empty() || a.wrong_lines.back() != r.line)) a.wrong_lines.push_back(r.line);
        }
    }
  } else {
    for (const auto& r : run.pt_rows) {
      if (r.bw_avg_gbps) bw[r.size_bytes].push_back(*r.bw_avg_gbps);
      const auto t = r.t_typical_us ? r.t_typical_us : r.t_avg_us;
      if (t && (!a.latency_floor_us || *t < *a.latency_floor_us)) a.latency_floor_us = *t, a.latency_floor_size = r.size_bytes;
    }
  }
  if (!bw.empty()) {
    // The plateau: the median busbw of the (up to) three largest sizes within 4x of the
    // largest, each size first reduced to its median over repeats (-N, -d all).
    const int64_t top = bw.rbegin()->first;
    std::vector<double> pts;
    for (auto it = bw.rbegin(); it != bw.rend() && pts.size() < 3 && it->first * 4 >= top; ++it) {
      pts.push_back(median(it->second));
      a.plateau_from = it->first;
    }
    a.plateau = median(pts);
    a.plateau_size = top;
    for (const auto& [size, v] : bw) a.points.push_back(BandwidthPoint{size, median(v)});
    a.plateau_points = static_cast<int>(pts.size());
  }
  const std::string shape = run.tool == Tool::perftest ? run.nic : fmt::format("{}r{}h", run.ranks(), hosts.size());
  a.key = fmt::format("{}/{}/{}", run.collective.empty() ? "unknown" : run.collective, shape, a.plateau_size);
  return a;
}

std::optional<Expected> expected_for(const PerfRun& run, const std::vector<HostTopology>& topo, std::string& why) {
  if (run.tool == Tool::perftest) {
    if (run.latency_test) {
      why = "latency test: reported, not judged against the topology";
      return std::nullopt;
    }
    for (const auto& t : topo)
      for (const auto& n : t.nics) {
        if (n.device != run.nic) continue;
        Expected e;
        e.unit = "Gb/s";
        e.tolerance = kTolNet;
        const int dir = run.bidirectional ? 2 : 1;
        double pcie_gbps = n.pcie ? n.pcie->present_gbs * 8 : 1e18, pcie_nom = n.pcie ? n.pcie->nominal_gbs * 8 : 1e18;
        e.present = std::min(n.rate_gbps, pcie_gbps) * dir;
        e.nominal = std::min(n.nominal_rate_gbps, pcie_nom) * dir;
        e.formula = fmt::format("{}port rate {:g} Gb/s ({} on {}){}", dir == 2 ? "2 x " : "", n.nominal_rate_gbps, n.device, t.host,
                                n.pcie ? fmt::format(", NIC PCIe {:.0f} Gb/s", pcie_nom) : "");
        e.present_formula = fmt::format("{}min(trained rate {:g} Gb/s, NIC PCIe {:.0f} Gb/s)", dir == 2 ? "2 x " : "", n.rate_gbps,
                                        n.pcie ? pcie_gbps : 0.0);
        if (e.present + 1e-6 < e.nominal) {
          if (n.pcie && pcie_gbps < n.rate_gbps) e.degraded_part = fmt::format("NIC {} PCIe link downtrained ({})", n.device, n.pcie->worst_hop), e.degraded_cause = "pcie_link_degraded";
          else e.degraded_part = fmt::format("NIC {} port {} at {:g} Gb/s of {:g} Gb/s", n.device, n.port, n.rate_gbps, n.nominal_rate_gbps);
        }
        if (run.link_type == "Ethernet" || n.link_layer == "Ethernet") e.caveats.push_back("RoCE: PFC/ECN congestion can lower a healthy port");
        return e;
      }
    why = run.nic.empty() ? "perftest output names no device" : "no bundle has RDMA port " + run.nic;
    return std::nullopt;
  }
  if (!judged_collective(run.collective)) {
    why = run.collective.empty() ? "collective unknown (not printed before nccl-tests 2.17, not in the file name)"
          : run.collective == "alltoall" || run.collective == "alltoallv"
              ? run.collective + " cannot aggregate several NICs (nccl-tests#267): reported, not judged"
              : run.collective + " busbw is reported, not judged against the topology";
    return std::nullopt;
  }
  const auto hosts = run.hosts();
  if (hosts.empty()) {
    why = "no device lines: the run's hosts and ranks are unknown";
    return std::nullopt;
  }
  std::vector<const HostTopology*> ts;
  for (const auto& t : topo)
    if (std::find(hosts.begin(), hosts.end(), t.host) != hosts.end()) ts.push_back(&t);
  if (ts.empty()) {
    why = "no bundle for the run's hosts (" + hosts.front() + (hosts.size() > 1 ? ", ..." : "") + ")";
    return std::nullopt;
  }
  const size_t g = std::max<size_t>(1, run.devices.size() / hosts.size());
  Expected e;
  if (hosts.size() == 1) {
    const HostTopology& t = *ts.front();
    if (!t.nvlink_known) {
      // No link states: the GPU model's NVLink (SXM parts we know) bounds the nominal figure only.
      const auto gpus = used_gpus(run, t, g);
      int links = 0, ver = 0;
      for (const GpuInfo* gi : gpus) {
        if (gi->model_links == 0) {
          links = 0;
          break;
        }
        links = links ? std::min(links, gi->model_links) : gi->model_links;
        ver = gi->model_version;
      }
      if (gpus.empty() || links == 0) {
        why = "single-host run, and the bundle of " + t.host + " has no nvlink.link evidence and no NVLink GPU model it knows";
        return std::nullopt;
      }
      const double link = nvlink_link_gbs(ver);
      e.tolerance = kTolIntra;
      e.nominal = e.present = links * link * kNvlinkEfficiency;
      e.formula = fmt::format("{} NVLink{} links (GPU model 0x{:04x}) x {:g} GB/s per direction x {:.2f} (ring efficiency)", links, ver,
                              gpus.front()->pci_device, link, kNvlinkEfficiency);
      e.present_formula = e.formula;
      e.caveats.push_back("NVLink link states are not in the bundle (collect where NVML answers): lanes down cannot be seen");
      if (run.collective == "all_reduce")
        e.caveats.push_back("NVLS (NVLink SHARP) all_reduce reports busbw above the line rate; a healthy NVLS run only passes this bar");
      return e;
    }
    int min_act = 1 << 30, max_tot = 0, ver = 0;
    const GpuInfo* worst = nullptr;
    for (const GpuInfo* gi : used_gpus(run, t, g)) {
      if (gi->nvlinks_total < 0) continue;
      if (gi->nvlinks_active < min_act) min_act = gi->nvlinks_active, worst = gi;
      max_tot = std::max(max_tot, gi->nvlinks_total);
      ver = std::max(ver, gi->nvlink_version);
    }
    if (!worst || max_tot == 0) {
      why = "no NVLink on the run's GPUs in the bundle of " + t.host;
      return std::nullopt;
    }
    const double link = nvlink_link_gbs(ver);
    e.tolerance = kTolIntra;
    e.nominal = max_tot * link * kNvlinkEfficiency;
    e.present = min_act * link * kNvlinkEfficiency;
    e.formula = fmt::format("{} NVLink{} links x {:g} GB/s per direction x {:.2f} (ring efficiency)", max_tot, ver, link, kNvlinkEfficiency);
    e.present_formula = fmt::format("{} active links on the weakest GPU ({}) x {:g} GB/s x {:.2f}", min_act, worst->bdf, link, kNvlinkEfficiency);
    if (min_act < max_tot) {
      e.degraded_part = fmt::format("GPU {}: {} of {} NVLinks active", worst->bdf, min_act, max_tot);
      e.degraded_cause = "nvlink_down_or_degraded";
    }
    if (run.collective == "all_reduce")
      e.caveats.push_back("NVLS (NVLink SHARP) all_reduce reports busbw above the line rate; a healthy NVLS run only passes this bar");
    return e;
  }
  // Network: a ring moves at the speed of its slowest channel; every GPU of a host drives one.
  e.tolerance = kTolNet;
  double pres = 1e18, nom = 1e18;
  std::string terms, part, cause;
  for (const HostTopology* t : ts) {
    const auto gpus = used_gpus(run, *t, g);
    for (size_t i = 0; i < gpus.size(); ++i) {
      const Channel c = channel(*t, *gpus[i], i);
      if (c.nominal <= 0) continue;
      if (c.present < pres) {
        pres = c.present;
        terms = c.terms;
        part = c.part;
        cause = c.cause;
      }
      nom = std::min(nom, c.nominal);
    }
  }
  if (nom > 1e17) {
    why = "the bundles have no pcie.link / rdma.port evidence to bound the network path";
    return std::nullopt;
  }
  e.nominal = static_cast<double>(g) * nom * kNetEfficiency;
  e.present = static_cast<double>(g) * pres * kNetEfficiency;
  e.formula = fmt::format("{} GPUs/host x {:.1f} GB/s per GPU (min of NIC rate / 8 shared by the GPUs behind it, GPU PCIe, NIC PCIe) x {:.2f}",
                          g, nom, kNetEfficiency);
  e.present_formula = fmt::format("{} x min({}) GB/s x {:.2f}", g, terms, kNetEfficiency);
  e.degraded_part = part;
  e.degraded_cause = cause;
  if (hosts.size() == 2)
    e.caveats.push_back("two hosts: NCCL may pick Tree/NVLSTree, whose busbw exceeds the NIC rate; NCCL_ALGO=Ring measures the network");
  if (ts.size() < hosts.size())
    e.caveats.push_back(fmt::format("{} of {} hosts have a bundle; the others are assumed alike", ts.size(), hosts.size()));
  return e;
}

void judge(RunAnalysis& a, const std::vector<HostTopology>& topo, const Baseline* baseline) {
  const PerfRun& run = *a.run;
  RunVerdict& v = a.verdict;
  if (!a.plateau) {
    v.why = "no bandwidth values to judge";
    return;
  }
  const bool nccl = run.tool == Tool::nccl_tests;
  const std::string unit = nccl ? "GB/s busbw" : "Gb/s";
  std::string why_none;
  a.expected = expected_for(run, topo, why_none);
  const bool small = nccl && a.plateau_size < kPlateauMinBytes;
  if (a.expected && small) {
    a.notes.push_back(fmt::format("largest size {} is below 256M: not at the bandwidth plateau, not judged against the topology",
                                  human_size(a.plateau_size)));
  } else if (a.expected) {
    const Expected& e = *a.expected;
    const double floor = e.nominal * (1.0 - e.tolerance);
    if (*a.plateau >= floor) {
      v.status = "ok";
      v.why = fmt::format("plateau {:.1f} {} >= {:.1f} (expected {:.1f} - {:.0f} %)", *a.plateau, unit, floor, e.nominal, e.tolerance * 100);
    } else {
      v.status = "below_expected";
      v.shortfall = 1.0 - *a.plateau / e.nominal;
      const auto hosts = run.hosts();
      bool nogdr = false;
      std::string nogdr_host;
      for (const auto& t : topo)
        if (t.gdr && !*t.gdr && (hosts.empty() || std::find(hosts.begin(), hosts.end(), t.host) != hosts.end()))
          nogdr = true, nogdr_host = t.host;
      std::string sys_pair;
      if (nccl && hosts.size() > 1)
        for (const auto& t : topo)
          for (const auto& g : t.gpus)
            if (g.nic_level == "SYS" || g.nic_level == "NODE" || g.nic_level == "PHB")
              if (sys_pair.empty()) sys_pair = fmt::format("GPU {} and its nearest NIC {} are at level {} on {}", g.bdf, g.nearest_nic, g.nic_level, t.host);
      if (!e.degraded_part.empty()) {
        const bool explains = *a.plateau >= e.present * (1.0 - e.tolerance);
        v.bottleneck = e.degraded_part + (explains ? fmt::format(" (with it the path allows {:.1f}; the measurement matches)", e.present)
                                                   : fmt::format(" (with it the path allows {:.1f}; the measurement is lower still)", e.present));
        v.bottleneck_cause = e.degraded_cause;
      } else if (nogdr && (run.tool == Tool::perftest ? run.gpu_memory : hosts.size() > 1)) {
        v.bottleneck = "no GPUDirect RDMA on " + nogdr_host + " (nvidia_peermem not loaded, no DMA-BUF): traffic is staged through host memory";
        v.bottleneck_cause = "gpudirect_rdma_module_missing";
      } else if (!sys_pair.empty()) {
        v.bottleneck = "traffic through the CPU root complex: " + sys_pair;
      } else {
        v.bottleneck = "not explained by the topology in the bundle: congestion, NCCL_ALGO/NVLS/protocol settings, or a part the bundle does not show";
      }
      v.why = fmt::format("plateau {:.1f} {} is {:.0f} % below the expected {:.1f} (floor {:.1f}); likely bottleneck: {}", *a.plateau, unit,
                          v.shortfall * 100, e.nominal, floor, v.bottleneck);
    }
  } else {
    a.notes.push_back("not judged against the topology: " + why_none);
  }
  if (baseline) {
    const BaselineEntry* be = nullptr;
    for (const auto& x : baseline->entries)
      if (x.key == a.key) be = &x;
    if (!be) {
      a.notes.push_back("baseline has no entry " + a.key);
    } else if (!be->samples.empty()) {
      const double m = median(be->samples);
      // Noise-aware: the threshold is the default tolerance or three robust
      // standard deviations of the baseline's own samples, whichever is larger.
      const double sigma = 1.4826 * mad(be->samples) / m;
      const double tol = nccl && run.hosts().size() <= 1 ? kTolIntra : kTolNet;
      v.baseline_median = m;
      v.baseline_threshold = std::max(tol, 3.0 * sigma);
      if (*a.plateau < m * (1.0 - v.baseline_threshold) && v.status != "below_expected") {
        v.status = "regression";
        v.shortfall = 1.0 - *a.plateau / m;
        v.why = fmt::format("plateau {:.1f} {} is {:.0f} % below the baseline median {:.1f} ({} samples; threshold {:.0f} %)", *a.plateau,
                            unit, v.shortfall * 100, m, be->samples.size(), v.baseline_threshold * 100);
      } else if (v.status == "unjudged") {
        v.status = "ok";
        v.why = fmt::format("plateau {:.1f} {} within {:.0f} % of the baseline median {:.1f}", *a.plateau, unit, v.baseline_threshold * 100, m);
      }
    }
  }
  if (v.status == "unjudged" && v.why.empty()) v.why = a.notes.empty() ? "nothing to compare with" : a.notes.back();
}

std::vector<Finding> to_findings(const std::vector<RunAnalysis>& runs) {
  std::vector<Finding> corrupt, rest;
  for (const auto& a : runs) {
    const PerfRun& r = *a.run;
    const std::string what = fmt::format("{} ({})", r.collective.empty() ? "nccl-tests" : r.collective, r.file);
    Provenance prov{r.file, std::nullopt, ""};
    const int64_t oob = r.out_of_bounds.value_or(0);
    if (a.wrong_total > 0 || oob > 0) {
      Finding f;
      f.id = "perf.data_corruption";
      f.layer = Layer::nccl;
      f.severity = Severity::critical;
      f.summary = fmt::format("{}: results verified wrong ({} wrong elements{}) — data corruption on the path; do not trust this "
                              "host/GPU set until explained",
                              what, a.wrong_total, oob > 0 ? fmt::format(", out-of-bounds values {}", oob) : "");
      if (!a.wrong_lines.empty()) prov.line = a.wrong_lines.front();
      f.provenance = {prov};
      f.fields = {{"wrong", a.wrong_total}, {"out_of_bounds", oob}, {"file", r.file}};
      const auto hosts = r.hosts();
      if (hosts.size() == 1) f.subject.host = hosts.front();
      // Wrong results come from GPU memory, NVLink/PCIe data errors or an NCCL bug: weak votes for each.
      f.supports = {{"gpu_ecc_or_memory_fault", 2.0}, {"nvlink_down_or_degraded", 2.0}, {"nccl_bug", 2.0}};
      corrupt.push_back(std::move(f));
    }
    for (const auto& b : r.failures) {
      Finding f;
      f.id = "perf.test_failure";
      f.layer = Layer::nccl;
      f.severity = Severity::error;
      f.summary = what + ": " + b.text;
      f.provenance = {Provenance{r.file, b.line ? std::optional<int64_t>(b.line) : std::nullopt, b.text}};
      rest.push_back(std::move(f));
    }
    const auto& v = a.verdict;
    Finding f;
    f.provenance = {Provenance{r.file, std::nullopt, ""}};
    f.fields = {{"status", v.status}, {"key", a.key}, {"file", r.file}};
    if (a.plateau) f.fields["plateau"] = *a.plateau;
    if (a.expected) f.fields["expected"] = a.expected->nominal;
    if (!v.bottleneck.empty()) f.fields["bottleneck"] = v.bottleneck;
    const auto hosts = r.hosts();
    if (hosts.size() == 1) f.subject.host = hosts.front();
    if (r.tool == Tool::perftest && !r.nic.empty()) f.subject.nic = r.nic;
    if (v.status == "below_expected") {
      f.id = "perf.below_expected";
      f.layer = Layer::hardware;
      f.severity = Severity::error;
      f.summary = what + ": " + v.why;
      if (!v.bottleneck_cause.empty()) {
        const bool explains = v.bottleneck.find("the measurement matches") != std::string::npos;
        f.supports = {{v.bottleneck_cause, explains ? 20.0 : 4.0}};
      }
    } else if (v.status == "regression") {
      f.id = "perf.regression";
      f.layer = Layer::hardware;
      f.severity = Severity::error;
      f.summary = what + ": " + v.why;
    } else {
      f.id = v.status == "ok" ? "perf.ok" : "perf.unjudged";
      f.role = FindingRole::context;
      f.severity = Severity::info;
      f.summary = what + ": " + (a.plateau ? fmt::format("plateau {:.1f}; ", *a.plateau) : std::string()) + v.why;
    }
    rest.push_back(std::move(f));
  }
  corrupt.insert(corrupt.end(), rest.begin(), rest.end());
  return corrupt;
}

json run_json(const RunAnalysis& a) {
  const PerfRun& r = *a.run;
  json j = {{"file", r.file},
            {"tool", r.tool == Tool::nccl_tests ? "nccl-tests" : "perftest"},
            {"format", r.format},
            {"collective", r.collective},
            {"key", a.key},
            {"status", a.verdict.status},
            {"why", a.verdict.why},
            {"wrong", a.wrong_total},
            {"notes", a.notes}};
  for (const auto& n : r.notes) j["notes"].push_back(n);
  if (!r.version.empty()) j["nccl_tests_version"] = r.version;
  if (r.nccl_version) j["nccl_version"] = *r.nccl_version;
  if (r.out_of_bounds) j["out_of_bounds"] = *r.out_of_bounds;
  if (r.avg_busbw) j["avg_busbw_gbs"] = *r.avg_busbw;
  if (!r.error_column.empty()) j["error_column"] = r.error_column;
  if (!r.nccl_env.empty()) j["nccl_env"] = r.nccl_env;
  j["hosts"] = r.hosts();
  j["ranks"] = r.ranks();
  if (r.tool == Tool::perftest) {
    j["nic"] = r.nic;
    j["test"] = r.test_name;
    j["bidirectional"] = r.bidirectional;
    j["unit_printed"] = r.bw_unit;
  }
  if (a.plateau) {
    j["plateau"] = {{"value", *a.plateau}, {"unit", r.tool == Tool::nccl_tests ? "GB/s" : "Gb/s"}, {"size_bytes", a.plateau_size},
                    {"points", a.plateau_points}};
  }
  if (a.latency_floor_us) j["latency_floor"] = {{"us", *a.latency_floor_us}, {"size_bytes", a.latency_floor_size}};
  if (a.expected) {
    const auto& e = *a.expected;
    j["expected"] = {{"nominal", e.nominal},       {"present", e.present},     {"unit", e.unit},
                     {"tolerance", e.tolerance},   {"formula", e.formula},     {"present_formula", e.present_formula},
                     {"degraded_part", e.degraded_part}, {"caveats", e.caveats}};
  }
  if (a.verdict.status == "below_expected" || a.verdict.status == "regression") {
    j["shortfall"] = a.verdict.shortfall;
    if (!a.verdict.bottleneck.empty()) j["bottleneck"] = a.verdict.bottleneck;
    if (!a.verdict.bottleneck_cause.empty()) j["bottleneck_cause"] = a.verdict.bottleneck_cause;
  }
  if (a.verdict.baseline_median)
    j["baseline"] = {{"median", *a.verdict.baseline_median}, {"threshold", a.verdict.baseline_threshold}};
  json rows = json::array();
  if (r.tool == Tool::nccl_tests) {
    for (const auto& row : r.rows) {
      auto side = [](const SideResult& s) {
        json o = json::object();
        if (s.time_us) o["time_us"] = *s.time_us;
        if (s.algbw_gbs) o["algbw_gbs"] = *s.algbw_gbs;
        if (s.busbw_gbs) o["busbw_gbs"] = *s.busbw_gbs;
        if (s.wrong) o["wrong"] = *s.wrong;
        return o;
      };
      rows.push_back({{"size_bytes", row.size_bytes}, {"type", row.type}, {"redop", row.redop}, {"out_of_place", side(row.oop)},
                      {"in_place", side(row.ip)}});
    }
  } else {
    for (const auto& row : r.pt_rows) {
      json o = {{"size_bytes", row.size_bytes}, {"iterations", row.iterations}};
      if (row.bw_avg_gbps) o["bw_avg_gbps"] = *row.bw_avg_gbps;
      if (row.bw_peak_gbps) o["bw_peak_gbps"] = *row.bw_peak_gbps;
      if (row.msg_rate_mpps) o["msg_rate_mpps"] = *row.msg_rate_mpps;
      if (row.t_typical_us) o["t_typical_us"] = *row.t_typical_us;
      if (row.t_avg_us) o["t_avg_us"] = *row.t_avg_us;
      if (row.p99_us) o["p99_us"] = *row.p99_us;
      rows.push_back(std::move(o));
    }
  }
  j["rows"] = std::move(rows);
  return j;
}

json baseline_json(const std::vector<RunAnalysis>& runs, const std::vector<HostTopology>& topo, const Baseline* merge_into,
                   const std::string& created) {
  std::map<std::string, BaselineEntry> entries;
  if (merge_into)
    for (const auto& e : merge_into->entries) entries[e.key] = e;
  std::string nccl_v, tests_v;
  std::set<std::string> hosts;
  for (const auto& a : runs) {
    if (!a.plateau) continue;
    auto& e = entries[a.key];
    e.key = a.key;
    e.samples.push_back(*a.plateau);
    if (a.run->nccl_version) nccl_v = std::to_string(*a.run->nccl_version);
    if (!a.run->version.empty()) tests_v = a.run->version;
    for (const auto& h : a.run->hosts()) hosts.insert(h);
  }
  std::string fp;
  for (const auto& t : topo) fp += (fp.empty() ? "" : ",") + t.host + ":" + t.fingerprint();
  json arr = json::array();
  for (const auto& [k, e] : entries) arr.push_back({{"key", k}, {"samples", e.samples}, {"median", median(e.samples)}});
  std::string host_list;
  for (const auto& h : hosts) host_list += (host_list.empty() ? "" : ",") + h;
  return {{"format", "ccdiag-perf-baseline"},
          {"version", 1},
          {"created", created},
          {"host", host_list.empty() && merge_into ? merge_into->host : host_list},
          {"topology_fingerprint", fp.empty() && merge_into ? merge_into->fingerprint : fp},
          {"versions", {{"nccl", nccl_v}, {"nccl_tests", tests_v}}},
          {"entries", arr}};
}

Result<Baseline> parse_baseline(const json& j, const std::string& file) try {
  if (!j.is_object() || j.value("format", "") != "ccdiag-perf-baseline")
    return make_error("not a ccdiag perf baseline (format \"ccdiag-perf-baseline\" expected)", file,
                      "create one with ccdiag perf RESULTS --save-baseline FILE");
  if (j.value("version", 0) != 1) return make_error("unsupported baseline version", file);
  Baseline b;
  b.host = j.value("host", "");
  b.fingerprint = j.value("topology_fingerprint", "");
  b.created = j.value("created", "");
  if (j.contains("versions") && j["versions"].is_object()) {
    b.nccl_version = j["versions"].value("nccl", "");
    b.nccl_tests_version = j["versions"].value("nccl_tests", "");
  }
  if (!j.contains("entries") || !j["entries"].is_array()) return make_error("baseline has no entries[]", file);
  for (const auto& e : j["entries"]) {
    if (!e.is_object() || !e.contains("key") || !e["key"].is_string() || !e.contains("samples") || !e["samples"].is_array())
      return make_error("baseline entry without key/samples", file);
    BaselineEntry be;
    be.key = e["key"].get<std::string>();
    for (const auto& s : e["samples"])
      if (s.is_number() && s.get<double>() > 0) be.samples.push_back(s.get<double>());
    b.entries.push_back(std::move(be));
  }
  return b;
} catch (const json::exception& e) {
  return make_error(std::string("unexpected field type in baseline: ") + e.what(), file);
}

}  // namespace ccdiag::perf
