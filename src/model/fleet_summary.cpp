#include "ccdiag/fleet_summary.hpp"

namespace ccdiag {

std::string_view to_string(HostStatus s) {
  switch (s) {
    case HostStatus::ok: return "ok";
    case HostStatus::bad_bundle: return "bad_bundle";
    case HostStatus::no_bundle: return "no_bundle";
  }
  return "ok";
}

std::string_view to_string(RankState s) {
  switch (s) {
    case RankState::front: return "front";
    case RankState::behind: return "behind";
    case RankState::missing: return "no_data";
    case RankState::never_joined: return "never_joined";
  }
  return "front";
}

void to_json(nlohmann::json& j, const HostSummary& s) {
  auto opt = [](const auto& o) { return o ? nlohmann::json(*o) : nlohmann::json(); };
  auto str = [](const std::string& v) { return v.empty() ? nlohmann::json() : nlohmann::json(v); };
  nlohmann::json xids = nlohmann::json::object();
  for (const auto& [x, n] : s.hw.xids) xids[std::to_string(x)] = n;
  j = nlohmann::json{{"host", s.host},
                     {"status", std::string(to_string(s.status))},
                     {"input", str(s.input)},
                     {"error", str(s.error)},
                     {"time", str(s.time)},
                     {"kernel", str(s.kernel)},
                     {"nccl_version", str(s.nccl_version)},
                     {"driver_version", str(s.driver_version)},
                     {"cuda_version", str(s.cuda_version)},
                     {"dev_shm_bytes", opt(s.dev_shm_bytes)},
                     {"gpus", opt(s.hw.gpus)},
                     {"gpu_model", str(s.hw.gpu_model)},
                     {"nvlink_active", opt(s.hw.nvlink_active)},
                     {"nvlink_total", opt(s.hw.nvlink_total)},
                     {"nvlink_errors", opt(s.hw.nvlink_errors)},
                     {"nic_ports", opt(s.hw.nic_ports)},
                     {"nic_ports_active", opt(s.hw.nic_ports_active)},
                     {"ib_error_increase", opt(s.hw.ib_error_increase)},
                     {"pcie_links", opt(s.hw.pcie_links)},
                     {"pcie_downtrained", opt(s.hw.pcie_downtrained)},
                     {"throttled_gpus", s.hw.throttled_gpus},
                     {"xids", xids},
                     {"fell_off_bus", s.hw.fell_off_bus},
                     {"ranks", s.ranks},
                     {"findings", s.findings},
                     {"problems", s.problems},
                     {"worst_finding", str(s.worst_finding)},
                     {"unchecked", s.unchecked}};
}

nlohmann::json fleet_to_json(const FleetSummary& s) {
  nlohmann::json j;
  j["hosts_total"] = s.hosts_total;
  j["hosts_answered"] = s.hosts_answered;
  j["not_answered"] = nlohmann::json::array();
  for (const auto* h : s.not_answered)
    j["not_answered"].push_back({{"host", h->host},
                                 {"status", std::string(to_string(h->status))},
                                 {"reason", h->error},
                                 {"input", h->input.empty() ? nlohmann::json() : nlohmann::json(h->input)}});
  j["differences"] = nlohmann::json::array();
  for (const auto& d : s.differences) {
    nlohmann::json others = nlohmann::json::array();
    for (const auto& o : d.others) others.push_back({{"value", o.value}, {"hosts", o.hosts}});
    j["differences"].push_back(
        {{"attribute", d.attribute}, {"majority", d.majority}, {"majority_hosts", d.majority_hosts}, {"others", others}});
  }
  j["sequences"] = nlohmann::json::array();
  for (const auto& sp : s.sequences) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : sp.rows) {
      if (r.state == RankState::front) continue;  // the front is summarised by count
      rows.push_back({{"rank", r.rank},
                      {"host", r.host.empty() ? nlohmann::json() : nlohmann::json(r.host)},
                      {"state", std::string(to_string(r.state))},
                      {"last_started", r.last_started ? nlohmann::json(*r.last_started) : nlohmann::json()},
                      {"last_completed", r.last_completed ? nlohmann::json(*r.last_completed) : nlohmann::json()},
                      {"behind_by", r.behind_by},
                      {"op", r.op},
                      {"fr_state", r.fr_state},
                      {"absence", r.absence.empty() ? nlohmann::json() : nlohmann::json(r.absence)}});
    }
    j["sequences"].push_back({{"process_group", sp.process_group},
                              {"group_size", sp.group_size},
                              {"front", sp.front},
                              {"at_front", sp.at_front},
                              {"behind", sp.behind},
                              {"missing", sp.missing},
                              {"never_joined", sp.never_joined},
                              {"ranks_not_at_front", rows}});
  }
  j["census"] = nlohmann::json::array();
  for (const auto& g : s.census)
    j["census"].push_back({{"signature", g.signature}, {"ranks", g.ranks}, {"hosts", g.hosts}, {"count", g.ranks.size()}, {"odd", g.odd}});
  j["host_table"] = nlohmann::json::array();
  if (s.hosts)
    for (const auto& h : *s.hosts) j["host_table"].push_back(h);
  return j;
}

}  // namespace ccdiag
