#include "analysis/fleet/host_summary.hpp"

#include "ccdiag/evidence_kinds.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace ccdiag {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string str_field(const nlohmann::json& d, std::initializer_list<const char*> names) {
  if (!d.is_object()) return {};
  for (const char* n : names) {
    auto it = d.find(n);
    if (it != d.end() && it->is_string()) return it->get<std::string>();
  }
  return {};
}

std::optional<int64_t> int_field(const nlohmann::json& d, std::initializer_list<const char*> names) {
  if (!d.is_object()) return std::nullopt;
  for (const char* n : names) {
    auto it = d.find(n);
    if (it == d.end()) continue;
    if (it->is_number_integer() || it->is_number_unsigned()) return it->get<int64_t>();
    if (it->is_number_float()) return static_cast<int64_t>(it->get<double>());
  }
  return std::nullopt;
}

template <class T>
void add_opt(std::optional<T>& acc, T v) {
  acc = acc.value_or(0) + v;
}

// The GPU an item is about: subject.gpu, else data.uuid / bdf / index (gpu.device).
std::string gpu_key(const Evidence& e) {
  if (e.subject.gpu) return *e.subject.gpu;
  std::string k = str_field(e.data, {"uuid", "bdf"});
  if (!k.empty()) return k;
  if (auto i = int_field(e.data, {"index", "gpu"})) return std::to_string(*i);
  return {};
}

// Removes addresses and offsets so the same code path on two ranks gives the
// same text: "ncclAllReduce+0x1a2" -> "ncclAllReduce", "(anonymous)" kept.
std::string normalise_frame(std::string f) {
  if (const size_t plus = f.find("+0x"); plus != std::string::npos) f.resize(plus);
  if (const size_t paren = f.find('('); paren != std::string::npos && paren > 0) f.resize(paren);
  while (!f.empty() && f.back() == ' ') f.pop_back();
  if (f.empty() || starts_with(f, "0x")) return "??";
  return f;
}

}  // namespace

std::string stack_signature(const nlohmann::json& d) {
  if (!d.is_object()) return {};
  if (auto s = str_field(d, {"signature"}); !s.empty()) return s;
  auto threads = d.find("threads");
  if (threads == d.end() || !threads->is_array() || threads->empty()) return {};
  // The main thread tells what the rank is doing; NCCL's proxy and PyTorch's
  // watchdog threads look alike on every rank.
  const nlohmann::json* main = nullptr;
  for (const auto& t : *threads)
    if (t.is_object() && t.value("role", "") == "main") {
      main = &t;
      break;
    }
  if (!main) main = &threads->front();
  auto frames = main->find("frames");
  if (frames == main->end() || !frames->is_array()) return {};
  std::string sig;
  size_t n = 0;
  for (const auto& fr : *frames) {
    if (!fr.is_object()) continue;
    std::string fn = normalise_frame(fr.value("function", std::string("??")));
    if (!sig.empty()) sig += " < ";
    sig += fn;
    if (++n == 6) break;
  }
  return sig;
}

HostContribution summarize_host(const std::string& host, const std::string& input, const nlohmann::json& manifest,
                                const EvidenceSet& set) {
  HostContribution c;
  HostSummary& s = c.summary;
  s.host = host;
  s.input = input;
  s.time = str_field(manifest, {"time"});
  s.kernel = str_field(manifest, {"kernel"});
  s.ccdiag_version = str_field(manifest, {"ccdiag_version"});
  s.unchecked = set.unchecked.size();

  std::map<std::string, std::string> gpu_models;  // gpu -> model
  std::set<std::string> gpus;
  std::map<std::string, std::pair<int, int>> nvlinks;  // gpu -> (active, total)
  std::set<std::string> ports, active_ports;
  std::set<int> ranks;

  for (const auto& e : set.evidence) {
    const std::string& k = e.kind;
    if (!e.availability.is_ok()) continue;
    const auto& d = e.data;
    if (k == "host.versions") {
      const auto v = contract::HostVersions::parse(d);
      s.nccl_version = v.nccl_version;
      s.driver_version = v.driver_version;
      s.cuda_version = v.cuda_toolkit_version;
    } else if (k == "host.dev_shm") {
      s.dev_shm_bytes = int_field(d, {"size_bytes"});
    } else if (k == "host.identity") {
      if (s.kernel.empty()) s.kernel = str_field(d, {"kernel"});
    } else if (starts_with(k, "gpu.")) {
      const std::string g = gpu_key(e);
      if (!g.empty()) {
        gpus.insert(g);
        if (auto m = str_field(d, {"name"}); !m.empty()) gpu_models[g] = m;
      }
      std::vector<std::string> reasons;
      for (const char* key : {"clocks_event_reasons"}) {  // gpu.device (nvmlDeviceGetCurrentClocksEventReasons)
        auto it = d.find(key);
        if (it == d.end()) continue;
        if (it->is_array()) {
          for (const auto& r : *it)
            if (r.is_string() && r.get<std::string>() != "gpu_idle") reasons.push_back(r.get<std::string>());
        } else if (it->is_object()) {
          for (const auto& [name, on] : it->items())
            if (on.is_boolean() && on.get<bool>() && name != "gpu_idle") reasons.push_back(name);
        }
      }
      if (!reasons.empty()) {
        std::string line = (g.empty() ? "?" : g) + ":";
        for (size_t i = 0; i < reasons.size(); ++i) line += (i ? "," : " ") + reasons[i];
        s.hw.throttled_gpus.push_back(line);
      }
    } else if (k == "nvlink.link") {
      // One item per link (ccdiag/evidence_kinds.hpp).
      const auto l = contract::NvlinkLink::parse(d);
      if (l.active) {
        auto& slot = nvlinks[gpu_key(e)];
        slot.first += *l.active ? 1 : 0;
        slot.second += 1;
      }
      for (const char* name : {"crc_flit", "crc_data", "replay", "recovery"})
        if (auto it = l.counters.find(name); it != l.counters.end()) add_opt<int64_t>(s.hw.nvlink_errors, it->second);
    } else if (k == "pcie.link") {
      const auto link = contract::PcieLink::parse(d);
      if (const auto* ep = link.endpoint(); ep && ep->current_width && ep->max_width) {
        bool down = false;
        for (const auto& x : link.degraded()) down = down || x.lost_width || x.down;
        add_opt(s.hw.pcie_links, 1);
        add_opt(s.hw.pcie_downtrained, down ? 1 : 0);
      }
    } else if (k == "rdma.port") {
      const auto p = contract::RdmaPort::parse(d);
      const std::string name = e.subject.nic.value_or(p.device) + "/" + std::to_string(e.subject.port.value_or(p.port.value_or(1)));
      ports.insert(name);
      if (p.state == "ACTIVE") active_ports.insert(name);
    } else if (k == "rdma.counters") {
      // Error counters that grew over the probe window (data and packet counts are traffic).
      const auto c = contract::RdmaCounters::parse(d);
      if (c.sampled_twice)
        for (const auto& [name, v] : c.counters)
          if (v.delta && name.find("data") == std::string::npos && name.find("packets") == std::string::npos)
            add_opt<int64_t>(s.hw.ib_error_increase, *v.delta);
    } else if (k == "ranks.process") {
      std::optional<int64_t> r = e.subject.rank ? std::optional<int64_t>(*e.subject.rank) : int_field(d, {"rank"});
      if (r) ranks.insert(static_cast<int>(*r));
      if (auto w = int_field(d, {"world_size"})) c.world_size = std::max(c.world_size.value_or(0), static_cast<int>(*w));
    } else if (k == "stacks.process") {
      RankStack rs;
      rs.host = host;
      rs.rank = e.subject.rank.value_or(static_cast<int>(int_field(d, {"rank"}).value_or(-1)));
      rs.pid = e.subject.pid.value_or(int_field(d, {"pid"}).value_or(0));
      rs.signature = stack_signature(d);
      if (!rs.signature.empty()) c.stacks.push_back(std::move(rs));
    }
    if ((starts_with(k, "fr.") || starts_with(k, "nccl.")) && d.is_object()) {
      auto le = int_field(d, {"last_enqueued_seq"});
      auto ls = int_field(d, {"last_started_seq"});
      auto lc = int_field(d, {"last_completed_seq"});
      std::optional<int64_t> r = e.subject.rank ? std::optional<int64_t>(*e.subject.rank) : int_field(d, {"rank"});
      if ((le || ls || lc) && r) {
        RankProgress p;
        p.process_group = e.subject.process_group.value_or(str_field(d, {"process_group", "pg_name"}));
        p.rank = static_cast<int>(*r);
        p.host = host;
        p.last_enqueued = le;
        p.last_started = ls;
        p.last_completed = lc;
        if (auto g = int_field(d, {"group_size", "pg_size", "world_size", "nranks"})) p.group_size = static_cast<int>(*g);
        if (auto m = d.find("members"); m != d.end() && m->is_array() && m->size() <= 1u << 20)
          for (const auto& x : *m)
            if (x.is_number_integer()) p.members.push_back(x.get<int>());
        p.op = str_field(d, {"op", "profiling_name", "collective"});
        p.state = str_field(d, {"state"});
        c.progress.push_back(std::move(p));
        ranks.insert(p.rank);
      }
    }
  }

  Severity worst = Severity::info;
  for (const auto& f : set.findings) {
    ++s.findings;
    if (f.id == "kernel.xid" && f.fields.is_object()) {
      auto x = f.fields.find("xid");
      if (x != f.fields.end() && x->is_number_integer()) ++s.hw.xids[x->get<int>()];
    }
    if (f.id == "kernel.gpu_fell_off_bus") ++s.hw.fell_off_bus;
    if (f.role != FindingRole::context && f.severity >= Severity::warning) {
      ++s.problems;
      if (s.worst_finding.empty() || f.severity > worst) {
        worst = f.severity;
        s.worst_finding = f.summary;
      }
    }
    // A log finding that names a rank and a sequence number (a watchdog
    // timeout at SeqNum N) is a progress point for that rank. Not a
    // flight-recorder finding: its seq is the collective at fault, which the
    // rank it names may never have reached; the dumps' own fr.rank_progress
    // says how far each rank got.
    if (f.subject.rank && f.subject.seq && f.role != FindingRole::context && !starts_with(f.id, "fr.")) {
      RankProgress p;
      p.process_group = f.subject.process_group.value_or("");
      p.rank = *f.subject.rank;
      p.host = f.subject.host.value_or(host);
      p.last_started = f.subject.seq;
      c.progress.push_back(std::move(p));
      ranks.insert(*f.subject.rank);
    }
  }

  if (!gpus.empty()) {
    s.hw.gpus = static_cast<int>(gpus.size());
    std::map<std::string, int> counts;
    for (const auto& [g, m] : gpu_models) ++counts[m];
    int best = 0;
    for (const auto& [m, n] : counts)
      if (n > best) best = n, s.hw.gpu_model = m;
  }
  if (!nvlinks.empty()) {
    s.hw.nvlink_active = 0;
    s.hw.nvlink_total = 0;
    for (const auto& [g, at] : nvlinks) *s.hw.nvlink_active += at.first, *s.hw.nvlink_total += at.second;
  }
  if (!ports.empty()) {
    s.hw.nic_ports = static_cast<int>(ports.size());
    s.hw.nic_ports_active = static_cast<int>(active_ports.size());
  }
  s.ranks.assign(ranks.begin(), ranks.end());
  return c;
}

size_t compact_host_set(EvidenceSet& set, size_t max_data_bytes, size_t max_per_id) {
  for (auto& e : set.evidence) {
    if (!e.data.is_object()) continue;
    if (e.data.dump().size() <= max_data_bytes) continue;
    nlohmann::json kept = nlohmann::json::object();
    for (const auto& [k, v] : e.data.items())
      if (v.is_primitive()) kept[k] = v;
    kept["truncated_by_analyze"] = true;
    e.data = std::move(kept);
  }
  std::map<std::string, std::pair<size_t, size_t>> seen;  // id -> (kept index of first, count)
  std::vector<Finding> kept;
  size_t dropped = 0;
  for (auto& f : set.findings) {
    auto [it, fresh] = seen.try_emplace(f.id, kept.size(), 0);
    ++it->second.second;
    if (it->second.second <= max_per_id) {
      kept.push_back(std::move(f));
    } else {
      ++dropped;
      auto& first = kept[it->second.first];
      if (!first.fields.is_object()) first.fields = nlohmann::json::object();
      first.fields["repeated"] = it->second.second - max_per_id;
    }
  }
  set.findings = std::move(kept);
  return dropped;
}

}  // namespace ccdiag
