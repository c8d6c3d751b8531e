#include "analysis/fleet/fleet_summary.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace ccdiag {

void FleetInput::add(HostContribution c) {
  for (auto& p : c.progress) progress.push_back(std::move(p));
  for (auto& s : c.stacks) stacks.push_back(std::move(s));
  if (c.world_size) world_size = std::max(world_size.value_or(0), *c.world_size);
  hosts.push_back(std::move(c.summary));
}

void FleetInput::add_unanswered(const std::string& host, HostStatus status, const std::string& why,
                                const std::string& input) {
  HostSummary s;
  s.host = host;
  s.status = status;
  s.error = why;
  s.input = input;
  hosts.push_back(std::move(s));
}

namespace {

using Getter = std::function<std::string(const HostSummary&)>;

std::string opt_str(const std::optional<int>& v) { return v ? std::to_string(*v) : std::string(); }

std::optional<HostDifference> differ(const std::vector<HostSummary>& hosts, const std::string& attr, const Getter& get) {
  std::map<std::string, std::vector<std::string>> by_value;
  for (const auto& h : hosts) {
    if (h.status != HostStatus::ok) continue;
    const std::string v = get(h);
    if (v.empty()) continue;  // not reported: no opinion
    by_value[v].push_back(h.host);
  }
  if (by_value.size() < 2) return std::nullopt;
  HostDifference d;
  d.attribute = attr;
  for (const auto& [v, hs] : by_value)
    if (hs.size() > d.majority_hosts) d.majority = v, d.majority_hosts = hs.size();
  for (auto& [v, hs] : by_value)
    if (v != d.majority) d.others.push_back({v, hs});
  std::sort(d.others.begin(), d.others.end(),
            [](const auto& a, const auto& b) { return a.hosts.size() != b.hosts.size() ? a.hosts.size() < b.hosts.size() : a.value < b.value; });
  return d;
}

// Position of a rank in the sequence: the furthest collective it reached
// (enqueued, started or completed). In a hang the ranks at the front wait
// inside collective N+1 for the ones that never reached it.
std::optional<int64_t> position(const RankProgress& p) {
  std::optional<int64_t> pos;
  for (const auto& v : {p.last_enqueued, p.last_started, p.last_completed})
    if (v && (!pos || *v > *pos)) pos = v;
  return pos;
}

std::vector<SequencePicture> pictures(const FleetInput& in) {
  std::map<std::string, std::map<int, RankProgress>> by_pg;
  for (const auto& p : in.progress) {
    auto& slot = by_pg[p.process_group][p.rank];
    if (slot.rank < 0) {
      slot = p;
      continue;
    }
    auto mx = [](std::optional<int64_t>& a, const std::optional<int64_t>& b) {
      if (b && (!a || *b > *a)) a = b;
    };
    mx(slot.last_enqueued, p.last_enqueued);
    mx(slot.last_started, p.last_started);
    mx(slot.last_completed, p.last_completed);
    if (p.group_size) slot.group_size = std::max(slot.group_size.value_or(0), *p.group_size);
    if (slot.members.empty()) slot.members = p.members;
    if (slot.op.empty()) slot.op = p.op;
    if (slot.state.empty()) slot.state = p.state;
  }
  std::vector<SequencePicture> out;
  for (const auto& [pg, ranks] : by_pg) {
    SequencePicture sp;
    sp.process_group = pg;
    // The rows: the group's members when a dump's pg_config names them (a
    // sub-group's rows are its own ranks, never 0..n-1); for the default group
    // ranks 0..size-1; for a sub-group whose members nobody named, the ranks
    // that reported it (which others belong to it is not known).
    std::set<int> members;
    for (const auto& [r, p] : ranks) members.insert(p.members.begin(), p.members.end());
    const bool default_group = pg.empty() || pg == "0";
    std::vector<int> row_ranks;
    if (!members.empty() || !default_group) {
      for (const auto& [r, p] : ranks) members.insert(r);
      row_ranks.assign(members.begin(), members.end());
    } else {
      int size = 0;
      for (const auto& [r, p] : ranks) size = std::max({size, r + 1, p.group_size.value_or(0)});
      if (pg.empty() && in.world_size) size = std::max(size, *in.world_size);
      for (int r = 0; r < size; ++r) row_ranks.push_back(r);
    }
    sp.group_size = static_cast<int>(row_ranks.size());
    // The front is what the most advanced rank completed (or started): the
    // ranks that reached it wait for the ones behind.
    for (const auto& [r, p] : ranks)
      if (auto pos = position(p)) sp.front = std::max(sp.front, *pos);
    for (int r : row_ranks) {
      RankRow row;
      row.rank = r;
      auto it = ranks.find(r);
      if (it == ranks.end()) {
        row.state = RankState::missing;
        ++sp.missing;
      } else {
        const auto& p = it->second;
        row.host = p.host;
        row.last_started = p.last_started;
        row.last_completed = p.last_completed;
        row.op = p.op;
        row.fr_state = p.state;
        const auto pos = position(p);
        row.behind_by = pos ? sp.front - *pos : 0;
        if (pos && *pos < sp.front) {
          row.state = RankState::behind;
          ++sp.behind;
        } else {
          ++sp.at_front;
        }
      }
      sp.rows.push_back(std::move(row));
    }
    out.push_back(std::move(sp));
  }
  return out;
}

std::vector<FleetCensusGroup> census(const std::vector<RankStack>& stacks) {
  std::map<std::string, FleetCensusGroup> groups;
  std::map<std::string, std::set<std::string>> hosts;
  for (const auto& s : stacks) {
    auto& g = groups[s.signature];
    g.signature = s.signature;
    g.ranks.push_back(s.rank);
    hosts[s.signature].insert(s.host);
  }
  std::vector<FleetCensusGroup> out;
  size_t largest = 0;
  for (auto& [sig, g] : groups) {
    std::sort(g.ranks.begin(), g.ranks.end());
    g.hosts.assign(hosts[sig].begin(), hosts[sig].end());
    largest = std::max(largest, g.ranks.size());
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(), [](const FleetCensusGroup& a, const FleetCensusGroup& b) {
    if (a.ranks.size() != b.ranks.size()) return a.ranks.size() > b.ranks.size();
    return a.signature < b.signature;
  });
  if (out.size() > 1)
    for (auto& g : out) g.odd = g.ranks.size() < largest;
  return out;
}

}  // namespace

FleetSummary summarize_fleet(const FleetInput& in) {
  FleetSummary s;
  s.hosts = &in.hosts;
  s.hosts_total = in.hosts.size();
  for (const auto& h : in.hosts) {
    if (h.status == HostStatus::ok) ++s.hosts_answered;
    else s.not_answered.push_back(&h);
  }
  const std::vector<std::pair<std::string, Getter>> attrs = {
      {"nccl_version", [](const HostSummary& h) { return h.nccl_version; }},
      {"driver_version", [](const HostSummary& h) { return h.driver_version; }},
      {"cuda_version", [](const HostSummary& h) { return h.cuda_version; }},
      {"kernel", [](const HostSummary& h) { return h.kernel; }},
      {"gpus", [](const HostSummary& h) { return opt_str(h.hw.gpus); }},
      {"gpu_model", [](const HostSummary& h) { return h.hw.gpu_model; }},
      {"nvlink_active", [](const HostSummary& h) { return opt_str(h.hw.nvlink_active); }},
      {"nic_ports_active", [](const HostSummary& h) { return opt_str(h.hw.nic_ports_active); }},
      {"pcie_downtrained", [](const HostSummary& h) { return opt_str(h.hw.pcie_downtrained); }},
      {"dev_shm_bytes",
       [](const HostSummary& h) { return h.dev_shm_bytes ? std::to_string(*h.dev_shm_bytes) : std::string(); }},
  };
  for (const auto& [name, get] : attrs)
    if (auto d = differ(in.hosts, name, get)) s.differences.push_back(std::move(*d));
  s.sequences = pictures(in);
  s.census = census(in.stacks);
  return s;
}

}  // namespace ccdiag
