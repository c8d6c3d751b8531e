#include "report/render_fleet.hpp"

#include <fmt/format.h>

namespace ccdiag {

std::string dash_or(const std::optional<int>& v) { return v ? std::to_string(*v) : "—"; }
std::string dash_or(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "—"; }
std::string dash_or(const std::string& v) { return v.empty() ? "—" : v; }

std::string xid_text(const HostHardware& hw) {
  std::string s;
  for (const auto& [x, n] : hw.xids) s += fmt::format("{}{}×{}", s.empty() ? "" : ", ", x, n);
  if (hw.fell_off_bus) s += fmt::format("{}fell off bus×{}", s.empty() ? "" : ", ", hw.fell_off_bus);
  return s.empty() ? "—" : s;
}

namespace {

std::string join_hosts(const std::vector<std::string>& hs, size_t max = 8) {
  std::string s;
  for (size_t i = 0; i < hs.size() && i < max; ++i) s += (i ? "," : "") + hs[i];
  if (hs.size() > max) s += fmt::format(" (+{} more)", hs.size() - max);
  return s;
}

std::string ranks_text(const std::vector<int>& rs, size_t max = 12) {
  std::string s;
  for (size_t i = 0; i < rs.size() && i < max; ++i) s += (i ? "," : "") + std::to_string(rs[i]);
  if (rs.size() > max) s += fmt::format(" (+{} more)", rs.size() - max);
  return s;
}

std::string pos_text(const RankRow& r) {
  if (r.state == RankState::missing) return "no record from any host";
  if (r.state == RankState::never_joined) return "never arrived: " + r.absence;
  return fmt::format("started {} completed {}", dash_or(r.last_started), dash_or(r.last_completed));
}

bool host_is_flagged(const HostSummary& h) {
  return h.status != HostStatus::ok || h.problems > 0 || !h.hw.xids.empty() || h.hw.fell_off_bus ||
         (h.hw.pcie_downtrained && *h.hw.pcie_downtrained > 0) || !h.hw.throttled_gpus.empty() ||
         (h.hw.nvlink_errors && *h.hw.nvlink_errors > 0) || (h.hw.ib_error_increase && *h.hw.ib_error_increase > 0) ||
         (h.hw.nic_ports && h.hw.nic_ports_active && *h.hw.nic_ports_active < *h.hw.nic_ports);
}

}  // namespace

void render_fleet_text(const FleetSummary& s, std::ostream& out, bool verbose) {
  out << fmt::format("\nHosts: {} answered of {}\n", s.hosts_answered, s.hosts_total);
  if (!s.not_answered.empty()) {
    out << fmt::format("\nHosts that did not answer ({}):\n", s.not_answered.size());
    size_t n = 0;
    for (const auto* h : s.not_answered) {
      if (!verbose && n++ == 30) {
        out << fmt::format("  ... {} more (use --json or --verbose)\n", s.not_answered.size() - 30);
        break;
      }
      out << fmt::format("  {:<20} {:<10} {}\n", h->host, to_string(h->status), h->error);
    }
  }
  if (!s.differences.empty()) {
    out << "\nHosts that differ from the majority:\n";
    for (const auto& d : s.differences)
      for (const auto& o : d.others)
        out << fmt::format("  {:<17} {} on {} ({} host(s) have {})\n", d.attribute, o.value, join_hosts(o.hosts),
                           d.majority_hosts, d.majority);
  }
  for (const auto& sp : s.sequences) {
    out << fmt::format("\nCollective sequence, process group {}: {} ranks, front at seq {}; {} at the front, {} behind, "
                       "{} never joined, {} with no data\n",
                       sp.process_group.empty() ? "default" : sp.process_group, sp.group_size, sp.front, sp.at_front,
                       sp.behind, sp.never_joined, sp.missing);
    size_t n = 0;
    for (const auto& r : sp.rows) {
      if (r.state == RankState::front) continue;
      if (!verbose && n++ == 20) {
        out << "  ... more (use --json or --verbose)\n";
        break;
      }
      out << fmt::format("  rank {:<6} {:<8} {:<20} {}{}\n", r.rank, to_string(r.state), dash_or(r.host), pos_text(r),
                         r.behind_by ? fmt::format(" ({} behind)", r.behind_by) : "");
    }
  }
  if (!s.census.empty()) {
    out << "\nStack census (main thread of each rank):\n";
    size_t n = 0;
    for (const auto& g : s.census) {
      if (!verbose && n++ == 10) break;
      out << fmt::format("  {:>6} rank(s){} {}\n         ranks {} on {}\n", g.ranks.size(), g.odd ? " [odd]" : "      ",
                         g.signature, ranks_text(g.ranks), join_hosts(g.hosts, 4));
    }
  }
  if (s.hosts) {
    size_t flagged = 0;
    for (const auto& h : *s.hosts) flagged += host_is_flagged(h) ? 1 : 0;
    out << fmt::format("\nPer-host hardware ({} of {} host(s) shown{}):\n", verbose ? s.hosts->size() : flagged,
                       s.hosts->size(), verbose ? "" : ", those with a finding; --verbose for all");
    out << fmt::format("  {:<20} {:<5} {:<22} {:<8} {:<7} {:<7} {:<6} {:<6} {:<14} {}\n", "host", "gpus", "model",
                       "nvlink", "nic", "ib err", "pcie↓", "thr", "xid", "nccl");
    for (const auto& h : *s.hosts) {
      if (!verbose && !host_is_flagged(h)) continue;
      if (h.status != HostStatus::ok) {
        out << fmt::format("  {:<20} {}\n", h.host, to_string(h.status));
        continue;
      }
      const std::string nv = h.hw.nvlink_active ? fmt::format("{}/{}", *h.hw.nvlink_active, dash_or(h.hw.nvlink_total)) : "—";
      const std::string nic = h.hw.nic_ports ? fmt::format("{}/{}", dash_or(h.hw.nic_ports_active), *h.hw.nic_ports) : "—";
      out << fmt::format("  {:<20} {:<5} {:<22} {:<8} {:<7} {:<7} {:<6} {:<6} {:<14} {}\n", h.host, dash_or(h.hw.gpus),
                         dash_or(h.hw.gpu_model), nv, nic, dash_or(h.hw.ib_error_increase), dash_or(h.hw.pcie_downtrained),
                         h.hw.throttled_gpus.empty() ? "—" : std::to_string(h.hw.throttled_gpus.size()), xid_text(h.hw),
                         dash_or(h.nccl_version));
    }
  }
}

void render_fleet_markdown(const FleetSummary& s, std::ostream& out) {
  out << fmt::format("\n**Hosts**: {} answered of {}\n", s.hosts_answered, s.hosts_total);
  if (!s.not_answered.empty()) {
    out << "\n**Hosts that did not answer**\n\n| host | status | reason |\n|---|---|---|\n";
    for (const auto* h : s.not_answered) {
      std::string why = h->error;
      for (auto& c : why)
        if (c == '|' || c == '\n') c = ' ';
      out << fmt::format("| {} | {} | {} |\n", h->host, to_string(h->status), why);
    }
  }
  if (!s.differences.empty()) {
    out << "\n**Hosts that differ**\n\n| attribute | value | hosts | majority |\n|---|---|---|---|\n";
    for (const auto& d : s.differences)
      for (const auto& o : d.others)
        out << fmt::format("| {} | {} | {} | {} ({} hosts) |\n", d.attribute, o.value, join_hosts(o.hosts), d.majority,
                           d.majority_hosts);
  }
  for (const auto& sp : s.sequences) {
    out << fmt::format("\n**Sequence, group {}**: front seq {}; {} at front, {} behind, {} never joined, {} with no data\n",
                       sp.process_group.empty() ? "default" : sp.process_group, sp.front, sp.at_front, sp.behind,
                       sp.never_joined, sp.missing);
    size_t n = 0;
    for (const auto& r : sp.rows)
      if (r.state != RankState::front && n++ < 20)
        out << fmt::format("- rank {} ({}) {}: {}\n", r.rank, dash_or(r.host), to_string(r.state), pos_text(r));
  }
  if (!s.census.empty()) {
    out << "\n**Stack census**\n\n| ranks | signature | odd |\n|---|---|---|\n";
    size_t n = 0;
    for (const auto& g : s.census)
      if (n++ < 10) out << fmt::format("| {} ({}) | `{}` | {} |\n", g.ranks.size(), ranks_text(g.ranks, 6), g.signature, g.odd ? "yes" : "");
  }
}

}  // namespace ccdiag
