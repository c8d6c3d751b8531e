#include "collectors/rdma/rdma_findings.hpp"

#include <fmt/format.h>

#include <map>

namespace ccdiag {

namespace {

using nlohmann::json;

Finding base(const Evidence& e, const char* id, Severity sev, Layer layer, std::string summary) {
  return finding_from(e, id, layer, sev, std::move(summary));
}

// Port states as the collector stores them ("ACTIVE"), also accepting the raw
// sysfs form ("4: ACTIVE") that hand-written or older bundles carry.
std::string enum_name(const nlohmann::json& d, const char* key) {
  auto it = d.find(key);
  if (it == d.end() || !it->is_string()) return "";
  std::string v = it->get<std::string>();
  if (auto colon = v.find(": "); colon != std::string::npos && colon > 0 &&
      v.find_first_not_of("0123456789") == colon)
    v.erase(0, colon + 2);
  return v;
}

std::string port_name(const Evidence& e) {
  const int port = e.data.contains("port") && e.data["port"].is_number_integer() ? e.data["port"].get<int>()
                                                                                  : e.subject.port.value_or(0);
  return fmt::format("{}/{}", e.data.value("device", e.subject.nic.value_or("?")), port);
}

void port_findings(const Evidence& e, double majority_gbps, std::vector<Finding>& out) {
  const auto& d = e.data;
  const std::string state = enum_name(d, "state"), phys = enum_name(d, "phys_state");
  const std::string ll = d.value("link_layer", "");
  if (state.empty() && phys.empty()) return;
  if (phys == "LinkErrorRecovery") {
    Finding f = base(e, "rdma.port_flapping", Severity::error, Layer::hardware,
                     fmt::format("RDMA port {} is retraining its link right now (phys_state {})", port_name(e),
                                 d.value("phys_state_raw", "")));
    f.fields = {{"state", state}, {"phys_state", phys}};
    f.supports = {{"nic_link_flapping", 30.0}};
    out.push_back(std::move(f));
    return;
  }
  if (state == "INIT" && phys == "LinkUp" && ll == "InfiniBand") {
    Finding f = base(e, "rdma.port_no_subnet_manager", Severity::error, Layer::hardware,
                     fmt::format("IB port {} is physically up but in INIT: no subnet manager configured it (sm_lid {})",
                                 port_name(e), d.value("sm_lid", "?")));
    f.fields = {{"state", state}, {"phys_state", phys}, {"sm_lid", d.value("sm_lid", "")}};
    f.supports = {{"nic_port_down", 40.0}};  // no SM: the port will never carry traffic
    out.push_back(std::move(f));
    return;
  }
  if (state != "ACTIVE" || phys != "LinkUp") {
    Finding f = base(e, "rdma.port_down", Severity::critical, Layer::hardware,
                     fmt::format("RDMA port {} is not usable: state {}, phys_state {}", port_name(e),
                                 d.value("state_raw", state), d.value("phys_state_raw", phys)));
    f.fields = {{"state", state}, {"phys_state", phys}, {"link_layer", ll}};
    f.supports = {{"nic_port_down", 30.0}};
    out.push_back(std::move(f));
    return;
  }
  const double gbps = d.value("rate_gbps", 0.0);
  if (majority_gbps > 0 && gbps > 0 && gbps < majority_gbps) {
    Finding f = base(e, "rdma.port_rate_degraded", Severity::warning, Layer::hardware,
                     fmt::format("RDMA port {} runs at {} while most ports here run at {:g} Gb/sec", port_name(e),
                                 d.value("rate", ""), majority_gbps));
    f.role = FindingRole::symptom;  // slow collectives, not a hang
    f.fields = {{"rate_gbps", gbps}, {"majority_gbps", majority_gbps}};
    out.push_back(std::move(f));
  }
}

void counter_findings(const Evidence& e, std::vector<Finding>& out) {
  const auto& d = e.data;
  if (!d.value("sampled_twice", false)) return;
  const double interval = d.value("interval_s", 0.0);
  std::map<std::string, json> grown;  // class -> {name: delta}
  for (const char* group : {"counters", "hw_counters"}) {
    if (!d.contains(group) || !d[group].is_object()) continue;
    for (const auto& [name, c] : d[group].items()) {
      const int64_t delta = c.value("delta", int64_t{0});
      if (delta <= 0) continue;
      grown[c.value("class", "other")][name] = delta;
    }
  }
  auto sum = [](const json& m) {
    int64_t s = 0;
    for (const auto& [k, v] : m.items()) s += v.get<int64_t>();
    return s;
  };
  const std::string window = fmt::format("{:g} s", interval);
  if (grown.count("link_event")) {
    Finding f = base(e, "rdma.counters_rising", Severity::error, Layer::hardware,
                     fmt::format("RDMA port {}: link went down or retrained during the {} window ({})", port_name(e),
                                 window, grown["link_event"].dump()));
    f.fields = {{"category", "link_event"}, {"deltas", grown["link_event"]}, {"interval_s", interval}};
    f.supports = {{"nic_link_flapping", 40.0}};
    out.push_back(std::move(f));
  }
  if (grown.count("transport_fatal")) {
    const json& g = grown["transport_fatal"];
    Finding f = base(e, "rdma.counters_rising", Severity::error, Layer::transport,
                     fmt::format("RDMA port {}: transport errors grew during the {} window ({})", port_name(e), window,
                                 g.dump()));
    f.fields = {{"category", "transport_fatal"}, {"deltas", g}, {"interval_s", interval}};
    if (g.contains("req_transport_retries_exceeded") || g.contains("retry_exceeded_err"))
      f.supports.push_back({"ib_transport_retry_exceeded", 10.0});
    f.supports.push_back({"qp_error_state", 4.0});
    out.push_back(std::move(f));
  }
  if (grown.count("signal")) {
    const int64_t total = sum(grown["signal"]);
    // infiniband-diags thresholds are 10 for these; any growth in a short window is already notable.
    Finding f = base(e, "rdma.counters_rising", total >= 10 ? Severity::error : Severity::warning, Layer::hardware,
                     fmt::format("RDMA port {}: physical-layer errors grew by {} in {} ({})", port_name(e), total,
                                 window, grown["signal"].dump()));
    f.fields = {{"category", "signal"}, {"deltas", grown["signal"]}, {"interval_s", interval}};
    f.supports = {{"nic_link_flapping", total >= 10 ? 4.0 : 1.5}};
    out.push_back(std::move(f));
  }
  if (grown.count("loss")) {
    Finding f = base(e, "rdma.counters_rising", Severity::warning, Layer::transport,
                     fmt::format("RDMA port {}: retransmission/loss counters grew in {} ({}): packets lost on the path "
                                 "or a peer not answering",
                                 port_name(e), window, grown["loss"].dump()));
    f.fields = {{"category", "loss"}, {"deltas", grown["loss"]}, {"interval_s", interval}};
    f.supports = {{"ib_transport_retry_exceeded", 2.0}};
    out.push_back(std::move(f));
  }
  if (grown.count("congestion")) {
    Finding f = base(e, "rdma.congestion", Severity::info, Layer::transport,
                     fmt::format("RDMA port {}: congestion signals in {} ({})", port_name(e), window,
                                 grown["congestion"].dump()));
    f.role = FindingRole::context;
    f.fields = {{"category", "congestion"}, {"deltas", grown["congestion"]}, {"interval_s", interval}};
    out.push_back(std::move(f));
  }
}

void netdev_findings(const Evidence& e, std::vector<Finding>& out) {
  const auto& d = e.data;
  const std::string op = d.value("operstate", "");
  if (!op.empty() && op != "up" && op != "unknown") {
    Finding f = base(e, "net.netdev_down", Severity::error, Layer::hardware,
                     fmt::format("netdev {} of RDMA port {}/{} is {} (carrier {})", d.value("name", ""),
                                 d.value("rdma_device", ""), d.value("rdma_port", 0), op,
                                 d["carrier"].is_null() ? "unreadable" : d["carrier"].dump()));
    f.fields = {{"operstate", op}, {"mtu", d.value("mtu", 0)}};
    f.supports = {{"nic_port_down", 10.0}};
    out.push_back(std::move(f));
  }
  const int64_t flaps = d.value("carrier_changes_delta", int64_t{0});
  if (flaps > 0) {
    Finding f = base(e, "rdma.counters_rising", Severity::error, Layer::hardware,
                     fmt::format("netdev {} lost and regained carrier {} time(s) during the sample window",
                                 d.value("name", ""), flaps));
    f.fields = {{"category", "carrier_changes"}, {"deltas", {{"carrier_changes", flaps}}}};
    f.supports = {{"nic_link_flapping", 30.0}};
    out.push_back(std::move(f));
  }
}

void qp_findings(const Evidence& e, std::vector<Finding>& out) {
  // One finding per (process, device): 64 dead QPs of one rank are one fact.
  struct Group {
    json qps = json::array();
    std::optional<int64_t> pid;
    std::optional<int> rank;
    std::string comm, device;
    std::optional<int> port;
  };
  std::map<std::string, Group> groups;
  for (const auto& q : e.data.value("qps", json::array())) {
    const std::string state = q.value("state", "");
    if (state != "ERR" && state != "SQE") continue;
    const std::string key = q.value("device", "") + "/" + std::to_string(q.value("tgid", q.value("pid", int64_t{-1})));
    Group& g = groups[key];
    if (g.qps.size() < 32) g.qps.push_back(q);
    if (q.contains("tgid")) g.pid = q["tgid"].get<int64_t>();
    else if (q.contains("pid")) g.pid = q["pid"].get<int64_t>();
    if (q.contains("rank")) g.rank = q["rank"].get<int>();
    g.comm = q.value("comm", q.value("kern_name", ""));
    g.device = q.value("device", "");
    if (q.contains("port")) g.port = q["port"].get<int>();
  }
  for (auto& [key, g] : groups) {
    Finding f = base(e, "rdma.qp_error", Severity::error, Layer::transport,
                     fmt::format("{} queue pair(s) of {}{} on {} in ERR state (the connection is dead: NCCL aborts)",
                                 g.qps.size(), g.pid ? fmt::format("pid {}", *g.pid) : std::string("a kernel consumer"),
                                 g.rank ? fmt::format(" (rank {})", *g.rank) : std::string(), g.device));
    f.subject.nic = g.device;
    if (g.port) f.subject.port = *g.port;
    if (g.pid) f.subject.pid = *g.pid;
    if (g.rank) f.subject.rank = *g.rank;
    f.fields = {{"qps", g.qps}, {"device", g.device}, {"comm", g.comm}};
    f.supports = {{"qp_error_state", 60.0}};  // read from the kernel, not inferred from a log
    out.push_back(std::move(f));
  }
}

}  // namespace

std::vector<Finding> rdma_findings(const std::vector<Evidence>& evidence) {
  std::vector<Finding> out;
  // The host's majority rate among ACTIVE ports (per host: bundles of many hosts).
  std::map<std::string, std::map<double, int>> rates;
  for (const auto& e : evidence)
    if (e.kind == "rdma.port" && e.availability.is_ok() && enum_name(e.data, "state") == "ACTIVE")
      ++rates[e.subject.host.value_or("")][e.data.value("rate_gbps", 0.0)];
  std::map<std::string, double> majority;  // the rate most ACTIVE ports share; ties -> the faster
  for (const auto& [host, m] : rates) {
    int best = 0;
    for (const auto& [r, n] : m)
      if (n >= best) best = n, majority[host] = r;
  }
  for (const auto& e : evidence) {
    if (!e.availability.is_ok()) continue;
    if (e.kind == "rdma.port") port_findings(e, majority[e.subject.host.value_or("")], out);
    else if (e.kind == "rdma.counters") counter_findings(e, out);
    else if (e.kind == "net.netdev") netdev_findings(e, out);
    else if (e.kind == "rdma.qp") qp_findings(e, out);
  }
  return out;
}

}  // namespace ccdiag
