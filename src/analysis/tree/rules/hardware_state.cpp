// Rules over hardware evidence from bundles (rdma.*, pcie.*, nvlink.*): the
// state a probe read, as opposed to a log line about it. The data fields each
// reads are listed in docs/decision-tree.md; a missing or mistyped field makes
// the rule skip that item, never guess.
#include <cstdlib>
#include <set>

#include "analysis/tree/rules/rules.hpp"

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

// rdma.port: state / phys_state strings as sysfs prints them ("4: ACTIVE",
// "1: DOWN", "5: LinkUp", "3: Disabled"), counters (absolute) and
// counters_delta (growth between the two samples the probe took).
// rdma.qp: one QP of a job process, state as rdma-tool prints it ("RTS", "ERR").
void rdma_state(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  const auto used = nics_in_use(set);
  for (const auto* e : set.of_kind("rdma.port")) {
    if (!e->availability.is_ok()) continue;
    const auto state = str_field(e->data, "state").value_or("");
    const auto phys = str_field(e->data, "phys_state").value_or("");
    const bool in_use = used.empty() || (e->subject.nic && used.count(*e->subject.nic));
    if (!state.empty() && state.find("ACTIVE") == std::string::npos) {
      auto h = hyp("nic_port_down", e, in_use ? 40 : 8, "port_state:" + nic_port(e->subject),
                   nic_port(e->subject) + " on " + host_name(e->subject) + " is " + state +
                       (phys.empty() ? "" : " (" + phys + ")"));
      h.derived = derived_finding("tree.nic_port_down", Layer::hardware, Severity::critical, h.why, h.culprit, {e});
      out.push_back(std::move(h));
      continue;
    }
    const auto& delta = e->data.value("counters_delta", nlohmann::json::object());
    const auto& abs = e->data.value("counters", nlohmann::json::object());
    const int64_t downed_delta = int_field(delta, "link_downed").value_or(0);
    const int64_t downed = int_field(abs, "link_downed").value_or(0);
    const int64_t symbol_delta = int_field(delta, "symbol_error").value_or(0);
    if (downed_delta > 0 || downed > 0) {
      // Growth while we watched is a flap now; an old count is only a hint.
      const double w = downed_delta > 0 ? 30 : 5;
      auto h = hyp("nic_link_flapping", e, w, "link_downed:" + nic_port(e->subject),
                   nic_port(e->subject) + " on " + host_name(e->subject) + " went down " +
                       std::to_string(downed_delta > 0 ? downed_delta : downed) +
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
    const auto state = str_field(e->data, "state").value_or("");
    if (state != "ERR" && state != "SQE") continue;
    auto h = hyp("qp_error_state", e, 40, "qp_error", "QP " + str_field(e->data, "qpn").value_or("?") + " of pid " +
                                                          (e->subject.pid ? std::to_string(*e->subject.pid) : "?") +
                                                          " on " + nic_port(e->subject) + " is in state " + state);
    h.derived = derived_finding("tree.qp_error_state", Layer::transport, Severity::error, h.why, h.culprit, {e});
    out.push_back(std::move(h));
    break;  // every QP of the job drops to ERR together: one piece of evidence
  }
}

// pcie.link: {bdf, device (gpu|nic|bridge), current_speed, max_speed,
// current_width, max_width} as sysfs prints them ("16.0 GT/s PCIe", 8).
// nvlink.link: {link, state (active|inactive)} per GPU.
void pcie_state(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  for (const auto* e : set.of_kind("pcie.link")) {
    if (!e->availability.is_ok()) continue;
    const auto cw = int_field(e->data, "current_width"), mw = int_field(e->data, "max_width");
    const auto cs = str_field(e->data, "current_speed"), ms = str_field(e->data, "max_speed");
    const bool narrow = cw && mw && *cw > 0 && *cw < *mw;
    // "16.0 GT/s PCIe": the number leads; "Unknown" reads as 0 and is skipped.
    const double csv = cs ? std::strtod(cs->c_str(), nullptr) : 0, msv = ms ? std::strtod(ms->c_str(), nullptr) : 0;
    const bool slow = csv > 0 && msv > 0 && csv < msv;
    if (!narrow && !slow) continue;
    const std::string what = str_field(e->data, "device").value_or("device") + " " +
                             str_field(e->data, "bdf").value_or(e->subject.gpu.value_or("?"));
    auto h = hyp("pcie_link_degraded", e, 40, "pcie_link:" + what,
                 "PCIe link of " + what + " on " + host_name(e->subject) + " runs at " + (cs ? *cs : "?") + " x" +
                     std::to_string(cw.value_or(0)) + " instead of " + (ms ? *ms : "?") + " x" +
                     std::to_string(mw.value_or(0)));
    h.derived = derived_finding("tree.pcie_link_degraded", Layer::hardware, Severity::error, h.why, h.culprit, {e});
    out.push_back(std::move(h));
  }
  for (const auto* e : set.of_kind("nvlink.link")) {
    if (!e->availability.is_ok()) continue;
    const auto state = str_field(e->data, "state").value_or("");
    if (state.empty() || state == "active" || state == "Active") continue;
    auto h = hyp("nvlink_down_or_degraded", e, 25, "nvlink:" + e->subject.gpu.value_or("?"),
                 "NVLink " + str_field(e->data, "link").value_or("?") + " of GPU " + e->subject.gpu.value_or("?") +
                     " on " + host_name(e->subject) + " is " + state);
    h.derived = derived_finding("tree.nvlink_down", Layer::hardware, Severity::error, h.why, h.culprit, {e});
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
    have_iommu = true;
    const auto mode = str_field(e->data, "mode").value_or("");
    const bool enabled = bool_field(e->data, "enabled").value_or(mode == "translated");
    if (enabled && mode != "passthrough") {
      out.push_back(hyp("iommu_blocks_p2p", e, p2p_hang ? 6 : 1.5, "iommu_state",
                        "the IOMMU translates DMA on " + host_name(e->subject) + " (mode " +
                            (mode.empty() ? "translated" : mode) + "): peer-to-peer writes go through remapping"));
    } else {
      iommu_off = true;
      out.push_back(hyp("iommu_blocks_p2p", e, 0.05, "iommu_state",
                        "the IOMMU is " + (mode.empty() ? std::string("off") : mode) + " on " + host_name(e->subject)));
    }
  }
  for (const auto* e : set.of_kind("pcie.acs")) {
    if (!e->availability.is_ok()) continue;
    // Bridges off every GPU<->GPU / GPU<->NIC path cannot block P2P.
    if (bool_field(e->data, "on_p2p_path") == std::optional<bool>(false)) continue;
    have_acs = true;
    // The pcie collector stores acs_ctl as a number with its lspci-style text
    // in acs_ctl_text and the decoded bit in req_redirect; hand-written
    // bundles may carry the text in acs_ctl.
    const auto ctl = str_field(e->data, "acs_ctl_text").value_or(str_field(e->data, "acs_ctl").value_or(""));
    const bool redir = bool_field(e->data, "req_redirect")
                           .value_or(bool_field(e->data, "req_redir").value_or(ctl.find("ReqRedir+") != std::string::npos));
    if (redir) {
      auto h = hyp("pcie_acs_p2p_blocked", e, p2p_hang ? 30 : 3, "acs_state",
                   "ACS request redirection is on at bridge " + str_field(e->data, "bdf").value_or("?") + " on " +
                       host_name(e->subject) + ": peer traffic is sent up to the root complex");
      h.culprit.gpu.reset();
      out.push_back(std::move(h));
      acs_clear = false;
      have_acs = true;
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
