#include "collectors/rdma/rdma_collector.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "collectors/config/rank_procs.hpp"
#include "collectors/rdma/rdma_parse.hpp"
#include "sys/rdma_netlink.hpp"

namespace ccdiag {

namespace {

using nlohmann::json;
using namespace std::chrono;

Evidence make(const CollectContext& ctx, const char* kind, const std::string& source) {
  Evidence e;
  e.kind = kind;
  e.subject.host = ctx.host;
  e.provenance.source = source;
  return e;
}

struct Sample {
  std::map<std::string, uint64_t> values;
  std::map<std::string, std::string> errors;  // name -> "cannot read: Input/output error"
};

Sample read_counter_dir(const SysRoot& root, const std::string& dir, const std::vector<std::string>& names) {
  Sample s;
  for (const auto& n : names) {
    if (n == "lifespan") continue;  // the refresh period (ms), not a counter
    auto text = root.read_line(dir + "/" + n);
    if (!text) {
      s.errors[n] = text.error().message;
      continue;
    }
    if (auto v = rdma::parse_counter(*text)) s.values[n] = *v;
    else s.errors[n] = "not a number: " + text->substr(0, 40);  // "N/A (no PMA)" on very old kernels
  }
  return s;
}

json deltas(const Sample& a, const Sample& b, double interval_s, bool hw, int64_t& words_delta_out,
            const char* words_name) {
  json out = json::object();
  for (const auto& [name, v0] : a.values) {
    const auto it = b.values.find(name);
    if (it == b.values.end()) continue;
    const uint64_t d = rdma::counter_delta(v0, it->second, rdma::counter_wraps_32(name, hw) ? 32 : 0);
    json c{{"t0", v0}, {"t1", it->second}, {"delta", d},
           {"class", std::string(rdma::to_string(rdma::classify_counter(name)))}};
    if (interval_s > 0) c["per_s"] = static_cast<double>(d) / interval_s;
    if (words_name && name == words_name) words_delta_out = static_cast<int64_t>(d);
    out[name] = std::move(c);
  }
  return out;
}

struct PortRef {
  std::string dev, port, dir;
  std::vector<std::string> counter_names, hw_names;
  Sample c0, h0;
};

std::optional<int64_t> read_int(const SysRoot& root, const std::string& p) {
  auto t = root.read_line(p);
  if (!t || t->empty()) return std::nullopt;
  try {
    return std::stoll(*t);
  } catch (...) {
    return std::nullopt;
  }
}

// QP owners: the netlink PID may be the proxy thread; map it to its process.
void attribute_qps(const SysRoot& root, json& qps) {
  const auto ranks = find_rank_processes(root);
  std::map<int64_t, const ConfigRankProcess*> by_pid;
  for (const auto& r : ranks.ranks) by_pid[r.pid] = &r;
  for (auto& q : qps) {
    if (!q.contains("pid")) continue;
    const int64_t pid = q["pid"].get<int64_t>();
    int64_t tgid = pid;
    if (auto st = root.read_file("/proc/" + std::to_string(pid) + "/status", 16384))
      if (auto t = tgid_from_status(*st)) tgid = *t;
    q["tgid"] = tgid;
    if (auto c = root.read_line("/proc/" + std::to_string(tgid) + "/comm")) q["comm"] = *c;
    if (const auto it = by_pid.find(tgid); it != by_pid.end()) {
      if (it->second->rank) q["rank"] = *it->second->rank;
      if (it->second->local_rank) q["local_rank"] = *it->second->local_rank;
    }
  }
}

json qp_json(const RdmaNlQp& q) {
  json j{{"device", q.dev_name}, {"lqpn", q.lqpn}};
  if (q.port) j["port"] = *q.port;
  if (q.rqpn) j["rqpn"] = *q.rqpn;
  if (q.type) j["type"] = std::string(rdma_qp_type_name(*q.type));
  if (q.state) j["state"] = std::string(rdma_qp_state_name(*q.state));
  if (q.sq_psn) j["sq_psn"] = *q.sq_psn;
  if (q.rq_psn) j["rq_psn"] = *q.rq_psn;
  if (q.pid) j["pid"] = *q.pid;
  if (!q.kern_name.empty()) j["kern_name"] = q.kern_name;
  if (q.pdn) j["pdn"] = *q.pdn;
  // NCCL's GPU-flush QP is connected to itself: not a peer connection.
  j["self_connected"] = q.rqpn && *q.rqpn == q.lqpn;
  return j;
}

// `rdma -j res show qp` (iproute2) -> our QP objects.
json qps_from_rdma_tool_json(const json& arr, size_t& bad) {
  json out = json::array();
  if (!arr.is_array()) {
    ++bad;
    return out;
  }
  for (const auto& o : arr) {
    if (!o.is_object() || !o.contains("lqpn") || !o["lqpn"].is_number_unsigned()) {
      ++bad;
      continue;
    }
    json j{{"device", o.value("ifname", "")}, {"lqpn", o["lqpn"]}};
    for (const char* k : {"port", "rqpn", "pid", "pdn"})
      if (o.contains(k) && o[k].is_number()) j[k] = o[k];
    for (const char* k : {"type", "state"})
      if (o.contains(k) && o[k].is_string()) j[k] = o[k];
    if (o.contains("sq-psn")) j["sq_psn"] = o["sq-psn"];
    if (o.contains("rq-psn")) j["rq_psn"] = o["rq-psn"];
    if (o.contains("comm") && o["comm"].is_string() && !o.contains("pid")) j["kern_name"] = o["comm"];
    j["self_connected"] = j.contains("rqpn") && j["rqpn"] == j["lqpn"];
    out.push_back(std::move(j));
  }
  return out;
}

void collect_qps(const CollectContext& ctx, const RdmaProbeOptions& opts, CollectorOutput& out) {
  Evidence e = make(ctx, "rdma.qp", ctx.root.is_live() ? "NETLINK_RDMA RDMA_NLDEV_CMD_RES_QP_GET" : "/rdma-res-qp.json");
  json qps = json::array();
  size_t bad = 0;
  if (ctx.root.is_live()) {
    auto dump = dump_rdma_qps(opts.netlink_deadline);
    if (!dump) {
      e.availability = Availability::error(dump.error().one_line());
      out.unchecked.push_back(Unchecked{"RDMA queue pairs", UncheckedState::error, dump.error().one_line()});
      out.evidence.push_back(std::move(e));
      return;
    }
    if (dump->subsystem_absent) {
      e.availability = Availability::unavailable("RDMA subsystem absent: NETLINK_RDMA not supported (ib_core not loaded)");
      out.unchecked.push_back(Unchecked{"RDMA queue pairs", UncheckedState::skipped, "RDMA subsystem absent (NETLINK_RDMA not supported)"});
      out.evidence.push_back(std::move(e));
      return;
    }
    for (const auto& q : dump->qps) qps.push_back(qp_json(q));
    bad = dump->bad;
    e.data["devices"] = dump->devices.size();
  } else {
    auto text = ctx.root.read_file("/rdma-res-qp.json", 16 << 20);
    if (!text) {
      e.availability = Availability::unavailable("no captured QP list (rdma-res-qp.json) under --root");
      out.unchecked.push_back(Unchecked{"RDMA queue pairs", UncheckedState::skipped, "no rdma-res-qp.json in the --root tree"});
      out.evidence.push_back(std::move(e));
      return;
    }
    const json arr = json::parse(*text, nullptr, false);
    qps = qps_from_rdma_tool_json(arr, bad);
  }
  attribute_qps(ctx.root, qps);
  json by_state = json::object();
  for (const auto& q : qps) {
    const std::string s = q.value("state", "UNKNOWN");
    by_state[s] = by_state.value(s, 0) + 1;
  }
  e.data["qps"] = std::move(qps);
  e.data["count"] = e.data["qps"].size();
  e.data["by_state"] = by_state;
  e.data["undecodable"] = bad;
  out.raw.emplace_back("rdma/qps.json", e.data["qps"].dump(1));
  out.evidence.push_back(std::move(e));
}

}  // namespace

CollectorOutput collect_rdma(const CollectContext& ctx, const RdmaProbeOptions& opts) {
  CollectorOutput out;
  const SysRoot& root = ctx.root;
  auto devs = root.list_dir("/sys/class/infiniband");
  if (!devs || devs->empty()) {
    Evidence e = make(ctx, "rdma.port", "/sys/class/infiniband");
    const std::string why = "RDMA subsystem absent: /sys/class/infiniband " + std::string(devs ? "is empty" : "does not exist") +
                            " (no RDMA NIC, or ib_core not loaded, or not mapped into this container)";
    e.availability = Availability::unavailable(why);
    out.evidence.push_back(std::move(e));
    out.unchecked.push_back(Unchecked{"RDMA ports and counters", UncheckedState::skipped, why});
    collect_qps(ctx, opts, out);
    return out;
  }

  // t0: port attributes and the first counter sample.
  std::vector<PortRef> ports;
  std::map<std::string, std::pair<std::string, std::string>> netdev_port;  // netdev -> (dev, port)
  for (const auto& dev : *devs) {
    const std::string base = "/sys/class/infiniband/" + dev;
    std::string bdf;
    if (auto t = root.read_link(base + "/device")) bdf = t->substr(t->rfind('/') + 1);
    auto port_names = root.list_dir(base + "/ports");
    if (!port_names) continue;
    for (const auto& p : *port_names) {
      const std::string dir = base + "/ports/" + p;
      Evidence e = make(ctx, "rdma.port", dir);
      e.subject.nic = dev;
      try {
        e.subject.port = std::stoi(p);
      } catch (...) {
      }
      e.data["device"] = dev;
      e.data["port"] = e.subject.port.value_or(0);
      e.data["bdf"] = bdf;
      for (const char* a : {"fw_ver", "hca_type", "node_guid", "board_id"})
        if (auto v = root.read_line(base + "/" + a)) e.data[a] = *v;
      if (auto s = root.read_line(dir + "/state")) {
        e.data["state_raw"] = *s;
        if (auto c = rdma::parse_coded(*s)) e.data["state"] = c->name, e.data["state_code"] = c->code;
      }
      if (auto s = root.read_line(dir + "/phys_state")) {
        e.data["phys_state_raw"] = *s;
        if (auto c = rdma::parse_coded(*s)) e.data["phys_state"] = c->name, e.data["phys_state_code"] = c->code;
      }
      if (auto s = root.read_line(dir + "/rate")) {
        e.data["rate"] = *s;
        if (auto r = rdma::parse_rate(*s)) e.data["rate_gbps"] = r->gbps, e.data["lanes"] = r->lanes, e.data["speed"] = r->speed;
      }
      for (const char* a : {"link_layer", "lid", "sm_lid"})
        if (auto v = root.read_line(dir + "/" + a)) e.data[a] = *v;
      // GID table: empty slots read as all zero; their types/ndevs fail with EINVAL.
      json gids = json::array();
      size_t empty_slots = 0;
      std::set<std::string> netdevs;
      if (auto idx = root.list_dir(dir + "/gids")) {
        std::vector<int> order;
        for (const auto& i : *idx)
          if (!i.empty() && i.find_first_not_of("0123456789") == std::string::npos) order.push_back(std::stoi(i));
        std::sort(order.begin(), order.end());
        for (int i : order) {
          if (gids.size() >= 256) break;
          const std::string n = std::to_string(i);
          auto gid = root.read_line(dir + "/gids/" + n);
          if (!gid) continue;
          if (*gid == "0000:0000:0000:0000:0000:0000:0000:0000") {
            ++empty_slots;
            continue;
          }
          json g{{"index", i}, {"gid", *gid}};
          if (auto t = root.read_line(dir + "/gid_attrs/types/" + n)) g["type"] = *t;
          else g["type"] = nullptr;  // EINVAL: not a valid entry (NCCL skips it too)
          if (auto nd = root.read_line(dir + "/gid_attrs/ndevs/" + n)) {
            g["ndev"] = *nd;
            netdevs.insert(*nd);
          }
          gids.push_back(std::move(g));
        }
      }
      e.data["gids"] = std::move(gids);
      e.data["empty_gid_slots"] = empty_slots;
      // Netdevs of the same PCI function (what ibdev2netdev uses), for IB ports too.
      if (auto nets = root.list_dir(base + "/device/net"))
        for (const auto& n : *nets) netdevs.insert(n);
      e.data["netdevs"] = netdevs;
      for (const auto& n : netdevs) netdev_port.emplace(n, std::make_pair(dev, p));
      out.evidence.push_back(std::move(e));

      PortRef ref{dev, p, dir, {}, {}, {}, {}};
      if (auto c = root.list_dir(dir + "/counters")) ref.counter_names = *c;
      if (auto h = root.list_dir(dir + "/hw_counters")) ref.hw_names = *h;
      ref.c0 = read_counter_dir(root, dir + "/counters", ref.counter_names);
      ref.h0 = read_counter_dir(root, dir + "/hw_counters", ref.hw_names);
      ports.push_back(std::move(ref));
    }
  }
  std::map<std::string, std::optional<int64_t>> carrier0;
  for (const auto& [nd, _] : netdev_port) carrier0[nd] = read_int(root, "/sys/class/net/" + nd + "/carrier_changes");

  // The second sample: a fixture's t1 tree, or the live host after `interval`.
  const bool fixture_t1 = !root.is_live() && root.exists("/t1");
  const SysRoot t1root = fixture_t1 ? SysRoot(root.prefix() + "/t1") : root;
  const bool have_t1 = root.is_live() || fixture_t1;
  const auto started = steady_clock::now();
  if (root.is_live() && opts.interval.count() > 0) std::this_thread::sleep_for(opts.interval);
  const double interval_s = root.is_live() ? duration<double>(steady_clock::now() - started).count()
                                           : duration<double>(opts.interval).count();

  for (auto& ref : ports) {
    Evidence e = make(ctx, "rdma.counters", ref.dir + "/{counters,hw_counters}");
    e.subject.nic = ref.dev;
    try {
      e.subject.port = std::stoi(ref.port);
    } catch (...) {
    }
    e.data["device"] = ref.dev;
    e.data["port"] = e.subject.port.value_or(0);
    e.data["interval_s"] = interval_s;
    e.data["sampled_twice"] = have_t1;
    json errors = json::object();
    for (const auto& [n, why] : ref.c0.errors) errors["counters/" + n] = why;
    for (const auto& [n, why] : ref.h0.errors) errors["hw_counters/" + n] = why;
    if (have_t1) {
      // The fixture's t1 holds plain directories: read the counter dirs by the
      // class path, resolved against t1's own tree.
      const Sample c1 = read_counter_dir(t1root, ref.dir + "/counters", ref.counter_names);
      const Sample h1 = read_counter_dir(t1root, ref.dir + "/hw_counters", ref.hw_names);
      int64_t xmit_words = -1, dummy = -1;
      e.data["counters"] = deltas(ref.c0, c1, interval_s, false, xmit_words, "port_xmit_data");
      e.data["hw_counters"] = deltas(ref.h0, h1, interval_s, true, dummy, nullptr);
      // port_xmit_data counts 4-byte words.
      if (xmit_words >= 0) e.data["xmit_bytes_delta"] = xmit_words * 4;
    } else {
      json c = json::object(), h = json::object();
      for (const auto& [n, v] : ref.c0.values) c[n] = {{"t0", v}, {"class", std::string(rdma::to_string(rdma::classify_counter(n)))}};
      for (const auto& [n, v] : ref.h0.values) h[n] = {{"t0", v}, {"class", std::string(rdma::to_string(rdma::classify_counter(n)))}};
      e.data["counters"] = c;
      e.data["hw_counters"] = h;
    }
    e.data["read_errors"] = errors;
    if (ref.counter_names.empty() && ref.hw_names.empty())
      e.availability = Availability::unavailable("no counters/ or hw_counters/ under " + ref.dir);
    else if (!ref.c0.errors.empty() && ref.c0.values.empty() && ref.h0.values.empty())
      e.availability = Availability::error("every counter read failed (" + ref.c0.errors.begin()->second + ")");
    out.evidence.push_back(std::move(e));
  }
  if (!have_t1)
    out.unchecked.push_back(Unchecked{"RDMA counter deltas", UncheckedState::unavailable, "the --root tree has no t1/ second sample (deltas need two samples)"});

  for (const auto& [nd, where] : netdev_port) {
    const std::string base = "/sys/class/net/" + nd;
    Evidence e = make(ctx, "net.netdev", base);
    e.subject.nic = nd;
    e.data["name"] = nd;
    e.data["rdma_device"] = where.first;
    e.data["rdma_port"] = std::atoi(where.second.c_str());
    if (!root.exists(base)) {
      e.availability = Availability::unavailable("netdev " + nd + " not visible in this network namespace");
      out.evidence.push_back(std::move(e));
      continue;
    }
    if (auto v = root.read_line(base + "/operstate")) e.data["operstate"] = *v;
    if (auto v = read_int(root, base + "/mtu")) e.data["mtu"] = *v;
    // carrier and speed fail with EINVAL when the interface is down: null, not 0.
    if (auto v = read_int(root, base + "/carrier")) e.data["carrier"] = *v;
    else e.data["carrier"] = nullptr;
    if (auto v = read_int(root, base + "/speed")) e.data["speed_mbps"] = *v;
    else e.data["speed_mbps"] = nullptr;
    const auto c0 = carrier0[nd];
    if (c0) {
      e.data["carrier_changes"] = *c0;
      if (have_t1) {
        if (auto c1 = read_int(t1root, base + "/carrier_changes")) {
          e.data["carrier_changes_t1"] = *c1;
          e.data["carrier_changes_delta"] = *c1 >= *c0 ? *c1 - *c0 : *c1;
        } else if (fixture_t1) {
          e.data["carrier_changes_delta"] = 0;  // t1 tree without the file: unchanged
        }
      }
    }
    out.evidence.push_back(std::move(e));
  }
  collect_qps(ctx, opts, out);
  return out;
}

}  // namespace ccdiag
