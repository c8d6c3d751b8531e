// Rules over hardware evidence from bundles (rdma.*, pcie.*, nvlink.*): the
// state a probe read, as opposed to a log line about it. The data fields each
// reads are listed in docs/decision-tree.md; a missing or mistyped field makes
// the rule skip that item, never guess.
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <map>
#include <set>

#include "analysis/tree/rules/rules.hpp"
#include "ccdiag/evidence_kinds.hpp"

namespace ccdiag::rules {

namespace {

Hypothesis hyp(const char* cause, const Evidence* e, double w, std::string key, std::string why) {
  Hypothesis h;
  h.cause = cause;
  h.culprit = e->subject;
  h.weight = w;
  h.evidence_key = std::move(key);
  h.finding_ids = {"tree." + std::string(cause)};
  h.why = std::move(why);
  return h;
}

std::string nic_port(const Subject& s) {
  return s.nic.value_or("?") + " port " + std::to_string(s.port.value_or(1));
}

// NICs NCCL said it uses (log.net_ib); empty when unknown.
std::set<std::string> nics_in_use(const EvidenceSet& set) {
  std::set<std::string> out;
  for (const auto* e : set.of_kind("log.net_ib"))
    for (const auto& d : e->data.value("devices", nlohmann::json::array()))
      if (d.is_object()) out.insert(d.value("nic", ""));
  return out;
}

}  // namespace

// rdma.port, rdma.counters, rdma.qp as the rdma collector writes them (the
// contract and its typed views: ccdiag/evidence_kinds.hpp). Each vote shares
// the evidence key of the rdma findings' judgement of the same observation
// (collectors/rdma/rdma_findings.cpp), so one port state counts once.
void rdma_state(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  const auto used = nics_in_use(set);
  for (const auto* e : set.of_kind("rdma.port")) {
    if (!e->availability.is_ok()) continue;
    const auto p = contract::RdmaPort::parse(e->data);
    const bool in_use = used.empty() || (e->subject.nic && used.count(*e->subject.nic));
    if (!p.state.empty() && p.state.find("ACTIVE") == std::string::npos) {
      auto h = hyp("nic_port_down", e, in_use ? 40 : 8, "rdma.port_down",
                   nic_port(e->subject) + " on " + host_name(e->subject) + " is " + p.state +
                       (p.phys_state.empty() ? "" : " (" + p.phys_state + ")"));
      h.derived = derived_finding("tree.nic_port_down", Layer::hardware, Severity::critical, h.why, h.culprit, {e});
      out.push_back(std::move(h));
    }
  }
  // A since-boot link_downed count that every port of the host shares (links
  // train down once at boot) says nothing; one port's count among clean
  // peers is a hint.
  std::map<std::string, int64_t> clean_ports;  // host -> ports whose link_downed reads 0
  for (const auto* e : set.of_kind("rdma.counters")) {
    if (!e->availability.is_ok()) continue;
    const auto c = contract::RdmaCounters::parse(e->data);
    const auto it = c.counters.find("link_downed");
    if (it != c.counters.end() && it->second.t0 == std::optional<int64_t>(0)) ++clean_ports[host_name(e->subject)];
  }
  for (const auto* e : set.of_kind("rdma.counters")) {
    if (!e->availability.is_ok()) continue;
    const auto c = contract::RdmaCounters::parse(e->data);
    auto counter = [&](const char* name) {
      const auto it = c.counters.find(name);
      return it == c.counters.end() ? contract::RdmaCounter{} : it->second;
    };
    const auto downed = counter("link_downed");
    const int64_t downed_delta = c.sampled_twice ? downed.delta.value_or(0) : 0;
    const int64_t downed_t0 = clean_ports[host_name(e->subject)] > 0 ? downed.t0.value_or(0) : 0;
    const int64_t symbol_delta = c.sampled_twice ? counter("symbol_error").delta.value_or(0) : 0;
    if (downed_delta > 0 || downed_t0 > 0) {
      // Growth while we watched is a flap now; an old count is only a hint.
      const double w = downed_delta > 0 ? 30 : 5;
      auto h = hyp("nic_link_flapping", e, w, "rdma.counters_rising",
                   nic_port(e->subject) + " on " + host_name(e->subject) + " went down " +
                       std::to_string(downed_delta > 0 ? downed_delta : downed_t0) +
                       (downed_delta > 0 ? " time(s) while sampled" : " time(s) since boot") + " (link_downed)");
      h.derived = derived_finding("tree.nic_link_flapping", Layer::hardware,
                                  downed_delta > 0 ? Severity::error : Severity::warning, h.why, h.culprit, {e});
      out.push_back(std::move(h));
    }
    if (symbol_delta > 100)
      out.push_back(hyp("nic_link_flapping", e, 4, "symbol_error:" + nic_port(e->subject),
                        nic_port(e->subject) + " counts symbol errors (" + std::to_string(symbol_delta) +
                            " while sampled): bad cable or transceiver"));
  }
  for (const auto* e : set.of_kind("rdma.qp")) {
    if (!e->availability.is_ok()) continue;
    const auto qps = contract::RdmaQps::parse(e->data);
    for (const auto& q : qps.qps) {
      if (q.state != "ERR" && q.state != "SQE") continue;
      auto h = hyp("qp_error_state", e, 40, "rdma.qp_error", "");
      if (!q.device.empty()) h.culprit.nic = q.device;
      if (q.port) h.culprit.port = static_cast<int>(*q.port);
      if (q.pid) h.culprit.pid = *q.pid;
      h.why = "QP " + (q.lqpn ? std::to_string(*q.lqpn) : std::string("?")) + " of pid " +
              (q.pid ? std::to_string(*q.pid) : "?") + " on " + nic_port(h.culprit) + " is in state " + q.state;
      h.derived = derived_finding("tree.qp_error_state", Layer::transport, Severity::error, h.why, h.culprit, {e});
      out.push_back(std::move(h));
      break;  // every QP of the job drops to ERR together: one piece of evidence
    }
  }
}

// pcie.link: the endpoint and every hop up to its root port (contract::PcieLink).
// Lost lanes are measured; a lower speed on a GPU's own link is the GPU's idle
// power saving (one sysfs read cannot tell it from a fault), elsewhere a lead.
// The key is the pcie findings' (collectors/pcie/pcie_findings.cpp): the same
// observation counts once.
// nvlink.link: {link, active}, one item per link (contract::NvlinkLink).
void pcie_state(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  for (const auto* e : set.of_kind("pcie.link")) {
    if (!e->availability.is_ok()) continue;
    const auto link = contract::PcieLink::parse(e->data);
    for (const auto& d : link.degraded()) {
      const auto& hop = link.path[d.hop];
      const bool gpu_link = link.role == "gpu" && d.hop <= 1;
      if (!d.down && !d.lost_width && gpu_link) continue;
      const std::string what = (link.role.empty() ? std::string("device") : link.role) + " " + link.bdf +
                               (hop.bdf == link.bdf ? "" : " (link at " + hop.bdf + ")");
      auto speed = [](double gts) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g GT/s", gts);
        return gts > 0 ? std::string(buf) : std::string("?");
      };
      auto h = hyp("pcie_link_degraded", e, d.down ? 10 : d.lost_width ? 40 : 4,
                   d.down ? "pcie.link_down" : "pcie.link_downtrained",
                   d.down ? "PCIe link of " + what + " on " + host_name(e->subject) + " is down"
                          : "PCIe link of " + what + " on " + host_name(e->subject) + " runs at " + speed(d.current_gts) +
                                " x" + std::to_string(d.current_width) + " instead of " + speed(d.max_gts) + " x" +
                                std::to_string(d.max_width));
      h.derived = derived_finding("tree.pcie_link_degraded", Layer::hardware, Severity::error, h.why, h.culprit, {e});
      out.push_back(std::move(h));
    }
  }
  // NVLinks: NVML lists only the links a chip has, but a GPU without a bridge
  // or switch shows them all inactive; a GPU with fewer active links than its
  // peers on the same host has lost some (the gpu findings' judgement:
  // nvlink.down, the same key).
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<const Evidence*, contract::NvlinkLink>>> links;
  for (const auto* e : set.of_kind("nvlink.link")) {
    if (!e->availability.is_ok()) continue;
    auto l = contract::NvlinkLink::parse(e->data);
    if (l.active) links[{e->subject.host.value_or(""), e->subject.gpu.value_or("?")}].emplace_back(e, std::move(l));
  }
  std::map<std::string, size_t> best;  // host -> most active links of one GPU
  auto active = [](const auto& v) {
    return static_cast<size_t>(std::count_if(v.begin(), v.end(), [](const auto& x) { return *x.second.active; }));
  };
  for (const auto& [key, v] : links) best[key.first] = std::max(best[key.first], active(v));
  for (const auto& [key, v] : links) {
    const size_t up = active(v);
    if (best[key.first] == 0 || up >= best[key.first]) continue;
    std::string down;
    const Evidence* first = nullptr;
    for (const auto& [e, l] : v)
      if (!*l.active) {
        if (!first) first = e;
        down += (down.empty() ? "" : ", ") + (l.link ? std::to_string(*l.link) : std::string("?"));
      }
    auto h = hyp("nvlink_down_or_degraded", first, 25, "nvlink.down",
                 "NVLink(s) " + down + " of GPU " + key.second + " on " + host_name(first->subject) + " inactive: " +
                     std::to_string(up) + " of " + std::to_string(v.size()) + " up, its peers have " +
                     std::to_string(best[key.first]));
    h.derived = derived_finding("tree.nvlink_down", Layer::hardware, Severity::error, h.why, h.culprit, {first});
    out.push_back(std::move(h));
  }
  // P2P blockers: IOMMU translation and ACS redirection, read from the host.
  // They argue for or against the p2p_silent_hang rule's candidates.
  const bool p2p_hang = [&] {
    for (const auto& f : set.findings)
      if (f.id == "tree.p2p_silent_hang") return true;
    return !set.of_kind("log.peer_access").empty() || !set.of_kind("log.channel_edge").empty();
  }();
  bool iommu_off = false, acs_clear = false, have_iommu = false, have_acs = false;
  for (const auto* e : set.of_kind("host.iommu")) {
    if (!e->availability.is_ok()) continue;
    const auto io = contract::HostIommu::parse(e->data);
    if (io.mode != "translated" && io.mode != "off" && io.mode != "passthrough") continue;  // unknown: no vote
    have_iommu = true;
    if (io.mode == "translated") {
      out.push_back(hyp("iommu_blocks_p2p", e, p2p_hang ? 6 : 1.5, "iommu_state",
                        "the IOMMU translates DMA on " + host_name(e->subject) +
                            " (mode translated): peer-to-peer writes go through remapping"));
    } else {
      iommu_off = true;
      out.push_back(hyp("iommu_blocks_p2p", e, 0.05, "iommu_state", "the IOMMU is " + io.mode + " on " + host_name(e->subject)));
    }
  }
  for (const auto* e : set.of_kind("pcie.acs")) {
    if (!e->availability.is_ok()) continue;
    const auto acs = contract::PcieAcs::parse(e->data);
    // Bridges off every GPU<->GPU / GPU<->NIC path cannot block P2P; a bridge
    // whose ACS could not be read tells nothing.
    if (acs.on_p2p_path == std::optional<bool>(false)) continue;
    if (!acs.acs_capability) continue;
    have_acs = true;
    const bool redir = *acs.acs_capability && acs.req_redirect.value_or(false);
    if (redir) {
      auto h = hyp("pcie_acs_p2p_blocked", e, p2p_hang ? 30 : 3, "acs_state",
                   "ACS request redirection is on at bridge " + acs.bdf + " on " + host_name(e->subject) +
                       ": peer traffic is sent up to the root complex");
      h.culprit.gpu.reset();
      out.push_back(std::move(h));
      acs_clear = false;
      break;
    }
    acs_clear = true;
  }
  if (have_acs && acs_clear)
    for (const auto* e : set.of_kind("pcie.acs")) {
      out.push_back(hyp("pcie_acs_p2p_blocked", e, 0.05, "acs_state", "ACS redirection is off on every bridge"));
      break;
    }
  // Both blockers ruled out and peers still never hear each other: the
  // driver's P2P path itself.
  if (p2p_hang && have_iommu && iommu_off && have_acs && acs_clear) {
    const auto* e = set.of_kind("pcie.acs").front();
    out.push_back(hyp("gpu_driver_p2p_bug", e, 25, "p2p_blockers_ruled_out",
                      "P2P hangs although the IOMMU is off and ACS redirection is off: the driver's P2P path"));
  }
}

}  // namespace ccdiag::rules
