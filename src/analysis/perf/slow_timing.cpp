#include "analysis/perf/slow_timing.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ccdiag::perf {

namespace {

// The rank a process is known by: its rank in the one largest communicator it is in (the
// world). Several of the largest size (only 4-rank groups read): no rank is given.
std::optional<int> world_rank(const SkewAnalysis& s, const std::string& key) {
  std::optional<int> r;
  int best = -1;
  bool tie = false;
  if (auto it = s.comm_ranks.find(key); it != s.comm_ranks.end())
    for (const auto& [comm, rank] : it->second) {
      int n = 0;
      for (const auto& c : s.comms)
        if (c.comm == comm) n = std::max(n, c.nranks);
      if (n > best) best = n, r = rank, tie = false;
      else if (n == best) tie = true;
    }
  return tie ? std::nullopt : r;
}

RankProcess proc_of(const TimingAnalysis& a, const std::string& key) {
  if (auto it = a.skew.procs.find(key); it != a.skew.procs.end()) return it->second;
  RankProcess p;
  const auto colon = key.rfind(':');
  p.host = key.substr(0, colon);
  if (colon != std::string::npos) p.pid = std::atoll(key.c_str() + colon + 1);
  return p;
}

Subject subject_of(const TimingAnalysis& a, const std::string& key) {
  const RankProcess p = proc_of(a, key);
  Subject s;
  if (!p.host.empty()) s.host = p.host;
  if (p.pid) s.pid = p.pid;
  if (auto r = world_rank(a.skew, key)) s.rank = *r;
  if (auto it = a.hardware.find(key); it != a.hardware.end()) {
    if (!it->second.gpu.empty()) s.gpu = it->second.gpu;
    if (!it->second.nic.empty()) s.nic = it->second.nic;
  }
  if (!s.gpu) {
    if (!p.busid.empty()) s.gpu = p.busid;
    else if (p.cuda_dev) s.gpu = std::to_string(*p.cuda_dev);
  }
  return s;
}

std::string describe(const TimingAnalysis& a, const std::string& key) {
  const Subject s = subject_of(a, key);
  std::string out = fmt::format("{} pid {}", s.host.value_or("?"), s.pid.value_or(0));
  if (s.rank) out += fmt::format(" (rank {})", *s.rank);
  if (s.gpu) out += " gpu " + *s.gpu;
  if (s.nic) out += " nic " + *s.nic;
  return out;
}

nlohmann::json proc_json(const TimingAnalysis& a, const std::string& key) {
  nlohmann::json j = subject_of(a, key);
  j["process"] = key;
  return j;
}

}  // namespace

TimingAnalysis analyze_timings(const TimingSet& set, const std::string& source, double resolution_ms) {
  TimingAnalysis a;
  a.source = source;
  a.resolution_ms = resolution_ms;
  SkewOptions so;
  // A lag shorter than two ticks of the clock is not a measurement.
  so.late_min_ms = std::max(so.late_min_ms, 2 * resolution_ms);
  a.skew = analyze_skew(set.colls, so);
  a.channels = analyze_channels(set.channels);
  a.notes = set.notes;
  a.notes.insert(a.notes.end(), a.skew.notes.begin(), a.skew.notes.end());
  a.notes.insert(a.notes.end(), a.channels.notes.begin(), a.channels.notes.end());
  if (resolution_ms >= 1000)
    a.notes.push_back(
        "timestamps have whole seconds only: arrival skew under 2 s is not measurable (NCCL >= 2.26: "
        "NCCL_DEBUG_TIMESTAMP_LEVELS=INFO NCCL_DEBUG_TIMESTAMP_FORMAT='[%F %T.%6f] ')");
  return a;
}

std::vector<Finding> timing_findings(const TimingAnalysis& a) {
  std::vector<Finding> out;
  const auto& s = a.skew;
  const auto& ch = a.channels;
  auto slow_channels_of = [&](const std::string& key) {
    std::vector<std::string> v;
    for (const auto& c : ch.channels)
      if (c.slow && std::find(c.endpoints.begin(), c.endpoints.end(), key) != c.endpoints.end())
        v.push_back(fmt::format("{} channel {} (x{:.2f} over {} ops)", c.comm, c.channel, c.ratio, c.ops));
    return v;
  };
  auto slow_link = [&](const std::string& key, std::string why, nlohmann::json evidence) {
    Finding f;
    f.id = "perf.slow_link";
    f.layer = Layer::transport;
    f.severity = Severity::error;
    f.subject = subject_of(a, key);
    f.summary = fmt::format("{}: {} ({})", describe(a, key), why, a.source);
    f.provenance = {Provenance{a.source, std::nullopt, ""}};
    f.fields = {{"source", a.source}, {"process", proc_json(a, key)}, {"evidence", std::move(evidence)}};
    // Its NIC, its PCIe path or its cable: the ring cannot tell which, a counter or pair test can.
    f.supports = {{"slow_link_or_nic", 40.0}};
    out.push_back(std::move(f));
  };

  std::set<std::string> named;
  for (const auto& p : s.culprits) {
    std::vector<std::string> comms;
    for (const auto& c : s.comms)
      if (c.slow && std::find(c.members.begin(), c.members.end(), p) != c.members.end())
        comms.push_back(fmt::format("{} {} x{} ({:.2f} ms, z {:.1f})", c.comm, c.func, c.count, c.wire_ms, c.z));
    const auto chans = slow_channels_of(p);
    slow_link(p,
              fmt::format("every communicator it is in is slow on the wire ({}), every other member is cleared by a healthy "
                          "communicator{}: its NIC, PCIe path or link",
                          fmt::join(comms, ", "), chans.empty() ? "" : fmt::format("; slow channels where it is a network endpoint: {}", fmt::join(chans, ", "))),
              {{"communicators", comms}, {"channels", chans}});
    named.insert(p);
  }
  for (const auto& p : ch.nic_culprits) {
    if (named.count(p)) continue;
    const auto chans = slow_channels_of(p);
    slow_link(p,
              fmt::format("the channels where it is a network endpoint are persistently slow ({}), every other endpoint of them "
                          "is cleared by a healthy channel: its NIC, PCIe path or link",
                          fmt::join(chans, ", ")),
              {{"channels", chans}});
    named.insert(p);
  }
  for (const auto& l : ch.link_culprits) {
    const auto chans = slow_channels_of(l.from);
    Finding f;
    f.id = "perf.slow_link";
    f.layer = Layer::transport;
    f.severity = Severity::error;
    f.subject = subject_of(a, l.from);
    f.summary = fmt::format("link {} -> {}: channel(s) {} of {} are persistently slow and these two are their only endpoints "
                            "not cleared by a healthy channel: either NIC or the cable/switch between them ({})",
                            describe(a, l.from), describe(a, l.to), fmt::join(l.channels, ","), l.comm, a.source);
    f.provenance = {Provenance{a.source, std::nullopt, ""}};
    f.fields = {{"source", a.source}, {"process", proc_json(a, l.from)}, {"peer", proc_json(a, l.to)}, {"comm", l.comm},
                {"channels", l.channels}};
    f.supports = {{"slow_link_or_nic", 10.0}};
    out.push_back(std::move(f));
  }
  const bool culprit = !out.empty();
  for (const auto& c : s.comms) {
    if (!c.slow) continue;
    Finding f;
    f.id = "perf.slow_communicator";
    f.layer = Layer::transport;
    f.severity = Severity::warning;
    f.role = culprit ? FindingRole::symptom : FindingRole::primary;
    f.subject.comm = c.comm;
    f.summary = fmt::format("communicator {}{} ({} x {} elements, {} ranks): wire time {:.2f} ms, modified z {:.1f} against "
                            "communicators of the same shape, over {} collectives ({})",
                            c.comm, c.comm_name.empty() ? "" : " " + c.comm_name, c.func, c.count, c.members.size(), c.wire_ms, c.z,
                            c.collectives, a.source);
    f.fields = {{"comm", c.comm}, {"wire_ms", c.wire_ms}, {"z", c.z}, {"source", a.source}};
    out.push_back(std::move(f));
  }
  std::map<std::string, std::vector<std::string>> slow_ch;
  for (const auto& c : ch.channels)
    if (c.slow) slow_ch[c.comm].push_back(fmt::format("{} (x{:.2f}, {:.1f} ms over {} ops)", c.channel, c.ratio, c.median_ms, c.ops));
  for (const auto& [comm, list] : slow_ch) {
    Finding f;
    f.id = "perf.slow_channel";
    f.layer = Layer::transport;
    f.severity = Severity::warning;
    f.role = culprit ? FindingRole::symptom : FindingRole::primary;
    f.subject.comm = comm;
    f.summary = fmt::format("communicator {}: channel(s) {} take persistently longer than the others' proxy ops{} ({})", comm,
                            fmt::join(list, ", "),
                            ch.suspects.empty() ? "" : fmt::format("; endpoints not cleared: {}", fmt::join(ch.suspects, ", ")), a.source);
    f.fields = {{"comm", comm}, {"channels", list}, {"suspects", ch.suspects}, {"source", a.source}};
    out.push_back(std::move(f));
  }
  std::set<std::string> in_late_host;
  for (const auto& h : s.late_hosts) {
    Finding f;
    f.id = "perf.slow_host";
    f.layer = Layer::framework;
    f.severity = Severity::warning;
    f.role = FindingRole::primary;
    f.subject.host = h.host;
    f.summary = fmt::format("every process on {} ({}) arrives late at its collectives (median {:.1f} ms): the node is slow "
                            "(CPU, input pipeline, throttled GPUs) or its clock is offset; not a link ({})",
                            h.host, h.members.size(), h.median_lag_ms, a.source);
    f.fields = {{"host", h.host}, {"processes", h.members}, {"median_lag_ms", h.median_lag_ms}, {"source", a.source}};
    f.supports = {{"straggler_or_timeout_too_short", 6.0}};
    out.push_back(std::move(f));
    in_late_host.insert(h.members.begin(), h.members.end());
  }
  for (const auto& l : s.late) {
    Finding f;
    f.id = "perf.late_arrival";
    f.layer = Layer::framework;
    f.severity = Severity::warning;
    // A late process on a late host is part of that finding, not a cause of its own.
    f.role = in_late_host.count(l.member) ? FindingRole::symptom : FindingRole::primary;
    f.subject = subject_of(a, l.member);
    const std::string own = l.own_ms >= 0 ? fmt::format("; when last its own collective time is {:.2f} ms vs its peers' {:.2f} ms (they wait for it)",
                                                         l.own_ms, l.others_ms)
                                          : "";
    f.summary = fmt::format("{} arrives late in {:.0f} % of {} collectives (median {:.1f} ms behind the median arrival, z {:.1f}){}: "
                            "a compute/input straggler, not a slow link ({})",
                            describe(a, l.member), l.fraction_late * 100, l.collectives, l.median_lag_ms, l.z, own, a.source);
    f.fields = {{"process", proc_json(a, l.member)}, {"fraction_late", l.fraction_late}, {"median_lag_ms", l.median_lag_ms},
                {"source", a.source}};
    if (f.role == FindingRole::primary) f.supports = {{"straggler_or_timeout_too_short", 6.0}};
    out.push_back(std::move(f));
  }
  return out;
}

void attach_hardware(TimingAnalysis& a, const EvidenceSet& set, const std::vector<HostTopology>& topo) {
  for (const auto& [key, proc] : a.skew.procs) {
    ProcessHardware hw;
    hw.gpu = proc.busid;
    if (hw.gpu.empty())
      for (const auto* e : set.of_kind("ranks.process"))
        if (e->subject.host == proc.host && e->subject.pid == proc.pid && e->subject.gpu) hw.gpu = *e->subject.gpu;
    for (const auto& t : topo) {
      if (t.host != proc.host) continue;
      for (const auto& g : t.gpus)
        if (!hw.gpu.empty() && (g.bdf == hw.gpu || std::to_string(g.index) == hw.gpu)) {
          hw.gpu = g.bdf;
          hw.nic = g.nearest_nic;
        }
    }
    if (!hw.gpu.empty() || !hw.nic.empty()) a.hardware[key] = hw;
  }
}

bool timing_problem(const TimingAnalysis& a) {
  return !a.skew.culprits.empty() || !a.skew.late.empty() || !a.channels.nic_culprits.empty() || !a.channels.link_culprits.empty() ||
         std::any_of(a.skew.comms.begin(), a.skew.comms.end(), [](const CommWire& c) { return c.slow; }) ||
         std::any_of(a.channels.channels.begin(), a.channels.channels.end(), [](const ChannelStat& c) { return c.slow; });
}

nlohmann::json timing_json(const TimingAnalysis& a) {
  const auto& s = a.skew;
  nlohmann::json comms = nlohmann::json::array();
  for (const auto& c : s.comms)
    comms.push_back({{"comm", c.comm}, {"comm_name", c.comm_name}, {"func", c.func}, {"count", c.count}, {"nranks", c.nranks},
                     {"processes", c.members}, {"collectives", c.collectives}, {"wire_ms", c.wire_ms}, {"z", c.z},
                     {"compared", c.compared}, {"slow", c.slow}});
  nlohmann::json chans = nlohmann::json::array();
  for (const auto& c : a.channels.channels)
    chans.push_back({{"comm", c.comm}, {"channel", c.channel}, {"ops", c.ops}, {"median_ms", c.median_ms}, {"ratio", c.ratio},
                     {"z", c.z}, {"slow", c.slow}, {"endpoints", c.endpoints}});
  nlohmann::json late = nlohmann::json::array();
  for (const auto& l : s.late) {
    nlohmann::json j = proc_json(a, l.member);
    j.update({{"collectives", l.collectives}, {"fraction_late", l.fraction_late}, {"median_lag_ms", l.median_lag_ms}, {"z", l.z}});
    if (l.own_ms >= 0) j.update({{"own_ms", l.own_ms}, {"others_ms", l.others_ms}});
    late.push_back(std::move(j));
  }
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& h : s.late_hosts) hosts.push_back({{"host", h.host}, {"processes", h.members}, {"median_lag_ms", h.median_lag_ms}});
  nlohmann::json culprits = nlohmann::json::array();
  std::set<std::string> seen;
  for (const auto& p : s.culprits)
    if (seen.insert(p).second) {
      culprits.push_back(proc_json(a, p));
      culprits.back()["by"] = "communicators";
    }
  for (const auto& p : a.channels.nic_culprits)
    if (seen.insert(p).second) {
      culprits.push_back(proc_json(a, p));
      culprits.back()["by"] = "channels";
    }
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : a.channels.link_culprits)
    links.push_back({{"comm", l.comm}, {"from", proc_json(a, l.from)}, {"to", proc_json(a, l.to)}, {"channels", l.channels}});
  return {{"source", a.source},
          {"resolution_ms", a.resolution_ms},
          {"collectives", s.collectives},
          {"timed", s.timed},
          {"proxy_ops", a.channels.samples},
          {"communicators", comms},
          {"channels", chans},
          {"suspects", s.suspects},
          {"channel_suspects", a.channels.suspects},
          {"culprits", culprits},
          {"links", links},
          {"late_arrivals", late},
          {"late_hosts", hosts},
          {"notes", a.notes}};
}

}  // namespace ccdiag::perf
