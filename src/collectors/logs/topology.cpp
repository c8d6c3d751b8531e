#include "collectors/logs/topology.hpp"

#include <cstdlib>
#include <iterator>
#include <map>

#include <fmt/format.h>

namespace ccdiag::logs {

namespace {
constexpr size_t kMaxEdges = 512;
constexpr size_t kMaxRings = 32;

// A field as text ("" when absent) or as an int (a string field is read with
// std::stoi, as a JSON string field was).
std::string s(const Captures& f, const char* k) { return f.text(k); }
std::optional<int> i(const Captures& f, const char* k) {
  if (auto n = f.integer(k)) return static_cast<int>(*n);
  auto v = f.string(k);
  if (!v) return std::nullopt;
  try {
    return std::stoi(std::string(*v));
  } catch (...) {
    return std::nullopt;
  }
}

// One communicator across processes: NCCL's commId (printed on Init START and
// COMPLETE since 2.19) is the same on every rank of a comm. Older lines give
// only its size, which still keeps the world apart from its subgroups.
std::string comm_identity(const CommInit& c) {
  return !c.comm_id.empty() ? c.comm_id : "nranks:" + std::to_string(c.nranks);
}
}  // namespace

std::string busid_to_bdf(const std::string& hex) {
  unsigned long long v = 0;
  try {
    v = std::stoull(hex, nullptr, 16);
  } catch (...) {
    return hex;
  }
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", v >> 20, (v >> 12) & 0xff, (v >> 4) & 0xff, v & 0xf);
}

TopoKind topo_kind(const std::string& id) {
  static const std::map<std::string, TopoKind> k{
      {"nccl.info.version", TopoKind::version},       {"nccl.info.cuda_driver", TopoKind::cuda_driver},
      {"nccl.info.bootstrap", TopoKind::bootstrap},   {"nccl.info.env", TopoKind::env},
      {"nccl.info.ib_using", TopoKind::ib_using},     {"nccl.info.socket_using", TopoKind::socket_using},
      {"nccl.info.network", TopoKind::network},       {"nccl.info.nranks", TopoKind::nranks},
      {"nccl.info.comm_init", TopoKind::comm_init},   {"nccl.info.nodes", TopoKind::nodes},
      {"nccl.info.transport", TopoKind::transport},   {"nccl.info.ring", TopoKind::ring}};
  auto it = k.find(id);
  if (it != k.end()) return it->second;
  return id.rfind("nccl.info.", 0) == 0 ? TopoKind::other : TopoKind::none;
}

void TopologyBuilder::add(std::string_view key, std::string_view host, std::optional<int64_t> pid,
                          std::optional<int> rank, std::optional<int> dev, TopoKind kind, const Captures& f,
                          const std::string& source) {
  // Lines of one process come in runs: skip the map lookup for the same key.
  if (!last_ || last_->key != key) {
    auto hit = by_key_.find(key);
    if (hit != by_key_.end()) {
      last_ = hit->second;
    } else {
      auto it = procs_.emplace(std::string(key), ProcessTopology{}).first;
      last_ = &it->second;
      by_key_.emplace(it->first, last_);
    }
  }
  auto& p = *last_;
  if (p.key.empty()) {
    p.key = key;
    p.host = host;
    p.pid = pid;
    p.source = source;
  }
  if (rank && !p.launcher_rank) p.launcher_rank = rank;
  if (dev) p.devs.insert(*dev);
  ++p.info_lines;
  if (kind == TopoKind::version) {
    p.version = s(f, "version") + s(f, "version_suffix");
    p.cuda = s(f, "cuda");
  } else if (kind == TopoKind::cuda_driver) {
    p.driver = s(f, "driver");
  } else if (kind == TopoKind::bootstrap) {
    p.bootstrap = s(f, "ifaces");
  } else if (kind == TopoKind::env) {
    p.env[s(f, "var")] = s(f, "value");
  } else if (kind == TopoKind::ib_using) {
    p.ib_using = s(f, "nics");
  } else if (kind == TopoKind::socket_using) {
    p.socket_using = s(f, "ifaces");
  } else if (kind == TopoKind::network) {
    p.network = s(f, "net");
  } else if (kind == TopoKind::nranks) {
    p.nranks_legacy = i(f, "nranks");
  } else if (kind == TopoKind::comm_init) {
    const std::string ptr = s(f, "comm_ptr");
    const int r = i(f, "rank").value_or(-1);
    CommInit* c = nullptr;
    for (auto& x : p.comms)
      if (x.ptr == ptr && x.rank == r) c = &x;
    if (!c) {
      p.comms.push_back(CommInit{});
      c = &p.comms.back();
      c->ptr = ptr;
      c->rank = r;
    }
    c->nranks = i(f, "nranks").value_or(0);
    c->cuda_dev = i(f, "cuda_dev").value_or(-1);
    c->nvml_dev = i(f, "nvml_dev");
    c->busid = s(f, "busid");
    if (f.has("comm_id")) c->comm_id = "0x" + s(f, "comm_id");
    if (s(f, "phase") == "COMPLETE") c->complete = true;
    p.current_comm = static_cast<int>(c - p.comms.data());
  } else if (kind == TopoKind::nodes) {
    const std::string ptr = s(f, "comm_ptr");
    CommInit* c = nullptr;
    for (auto& x : p.comms)
      if (x.ptr == ptr) c = &x;
    if (!c) {
      p.comms.push_back(CommInit{});
      c = &p.comms.back();
      c->ptr = ptr;
      c->rank = i(f, "rank").value_or(-1);
      c->nranks = i(f, "nranks").value_or(0);
    }
    c->nnodes = i(f, "nnodes");
    c->local_ranks = i(f, "local_ranks");
    c->local_rank = i(f, "local_rank");
    p.current_comm = static_cast<int>(c - p.comms.data());
  } else if (kind == TopoKind::transport) {
    if (p.edges.size() >= kMaxEdges) return;  // full: skip the formatting cost of every later channel line
    // Channel lines repeat one edge per channel: look the key up before building the edge.
    const int from = i(f, "from_rank").value_or(-1), to = i(f, "to_rank").value_or(-1);
    // "{from}[{from_dev}]->{to}[{to_dev}] {transport}", appended without temporaries.
    key_buf_.clear();
    key_buf_.append(std::to_string(from)).append("[");
    f.append_text(key_buf_, "from_dev");
    key_buf_.append("]->").append(std::to_string(to)).append("[");
    f.append_text(key_buf_, "to_dev");
    key_buf_.append("] ");
    f.append_text(key_buf_, "transport");
    key_buf_.append(" ").append(std::to_string(p.current_comm));
    if (p.edge_keys.count(key_buf_) == 0) {
      p.edge_keys.insert(key_buf_);
      p.edges.push_back(TransportEdge{from, to, s(f, "from_dev"), s(f, "to_dev"), s(f, "transport"),
                                      p.current_comm >= 0 ? comm_identity(p.comms[p.current_comm]) : std::string()});
    }
  } else if (kind == TopoKind::ring) {
    if (p.rings.size() < kMaxRings) p.rings.push_back(s(f, "ring_ranks"));
  }
}

std::optional<int> TopologyBuilder::rank_of(const std::string& key, std::optional<int> dev) const {
  auto it = procs_.find(key);
  if (it == procs_.end()) return std::nullopt;
  const CommInit* best = nullptr;
  for (const auto& c : it->second.comms) {
    if (c.rank < 0) continue;
    if (dev && c.cuda_dev >= 0 && c.cuda_dev != *dev) continue;
    if (!best || c.nranks > best->nranks) best = &c;
  }
  if (best) return best->rank;
  return it->second.launcher_rank;
}

std::optional<std::string> TopologyBuilder::bdf_of(const std::string& key, std::optional<int> dev) const {
  auto it = procs_.find(key);
  if (it == procs_.end()) return std::nullopt;
  for (const auto& c : it->second.comms)
    if (!c.busid.empty() && (!dev || c.cuda_dev == *dev)) return busid_to_bdf(c.busid);
  return std::nullopt;
}

std::optional<std::string> TopologyBuilder::host_of_rank(int rank) const {
  std::optional<std::string> host;
  for (const auto& [k, p] : procs_)
    for (const auto& c : p.comms)
      if (c.rank == rank && !p.host.empty()) {
        if (host && *host != p.host) return std::nullopt;  // ranks of several comms: ambiguous
        host = p.host;
      }
  return host;
}

std::vector<Evidence> TopologyBuilder::evidence() const {
  std::vector<Evidence> out;
  for (const auto& [key, p] : procs_) {
    Subject subj;
    if (!p.host.empty()) subj.host = p.host;
    if (p.pid) subj.pid = *p.pid;
    if (auto r = rank_of(key, std::nullopt)) subj.rank = *r;
    nlohmann::json comms = nlohmann::json::array();
    for (const auto& c : p.comms) {
      nlohmann::json j{{"comm", c.ptr}, {"rank", c.rank}, {"nranks", c.nranks}, {"cuda_dev", c.cuda_dev},
                       {"init_complete", c.complete}};
      if (c.nvml_dev) j["nvml_dev"] = *c.nvml_dev;
      if (!c.busid.empty()) j["bus_id"] = busid_to_bdf(c.busid);
      if (!c.comm_id.empty()) j["comm_hash"] = c.comm_id;
      if (c.nnodes) j["nnodes"] = *c.nnodes;
      if (c.local_ranks) j["local_ranks"] = *c.local_ranks;
      if (c.local_rank) j["local_rank"] = *c.local_rank;
      comms.push_back(j);
    }
    nlohmann::json edges = nlohmann::json::array();
    for (const auto& e : p.edges)
      edges.push_back({{"from", e.from_rank}, {"to", e.to_rank}, {"from_dev", e.from_dev}, {"to_dev", e.to_dev},
                       {"transport", e.transport}});
    Evidence t;
    t.kind = "nccl.topology";
    t.subject = subj;
    t.provenance.source = p.source;
    t.data = {{"process", key},   {"comms", comms},         {"network", p.network}, {"nics", p.ib_using},
              {"socket_interfaces", p.socket_using}, {"bootstrap", p.bootstrap}, {"env", p.env},
              {"transports", edges}, {"rings", p.rings}};
    out.push_back(std::move(t));
    if (!p.version.empty() || !p.driver.empty()) {
      Evidence v;
      v.kind = "nccl.version";
      v.subject = subj;
      v.provenance.source = p.source;
      v.data = {{"version", p.version}, {"cuda", p.cuda}, {"cuda_driver", p.driver}};
      out.push_back(std::move(v));
    }
  }
  return out;
}

namespace {
Finding make(const std::string& id, Layer l, Severity sev, FindingRole role, std::string summary) {
  Finding f;
  f.id = id;
  f.layer = l;
  f.severity = sev;
  f.role = role;
  f.summary = std::move(summary);
  return f;
}
std::string who(const ProcessTopology& p) {
  return p.pid ? p.host + ":" + std::to_string(*p.pid) : p.source;
}
}  // namespace

std::vector<Finding> TopologyBuilder::derived(bool any_error) const {
  std::vector<Finding> out;
  // Version / driver / env skew across processes.
  std::map<std::string, std::vector<std::string>> versions, drivers;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> env;  // var -> value -> procs
  size_t with_env = 0;
  for (const auto& [k, p] : procs_) {
    if (!p.version.empty()) versions[p.version].push_back(who(p));
    if (!p.driver.empty()) drivers[p.driver].push_back(who(p));
    if (!p.env.empty()) ++with_env;
    for (const auto& [var, val] : p.env) env[var][val].push_back(who(p));
  }
  if (versions.size() > 1) {
    std::string list;
    for (const auto& [v, ps] : versions) list += (list.empty() ? "" : ", ") + v + " (" + std::to_string(ps.size()) + " processes)";
    auto f = make("logs.nccl_version_skew", Layer::nccl, Severity::error, FindingRole::primary,
                  "NCCL versions differ across processes: " + list);
    f.fields["versions"] = versions;
    f.supports.push_back({"nccl_version_mismatch", 40});
    out.push_back(std::move(f));
  }
  if (drivers.size() > 1) {
    auto f = make("logs.cuda_driver_skew", Layer::system_config, Severity::warning, FindingRole::primary,
                  "CUDA driver versions differ across processes");
    f.fields["drivers"] = drivers;
    f.supports.push_back({"driver_library_mismatch", 3});
    f.supports.push_back({"nccl_version_mismatch", 1.5});
    out.push_back(std::move(f));
  }
  for (const auto& [var, vals] : env) {
    size_t procs = 0;
    for (const auto& [v, ps] : vals) procs += ps.size();
    if (vals.size() > 1 || (with_env > 1 && procs < with_env && procs > 0)) {
      auto f = make("logs.nccl_env_skew", Layer::system_config, Severity::warning, FindingRole::primary,
                    var + " differs across processes (" + std::to_string(vals.size()) + " values, set on " +
                        std::to_string(procs) + " of " + std::to_string(with_env) + ")");
      f.fields["var"] = var;
      f.fields["values"] = vals;
      f.supports.push_back({"nccl_config_error", 3});
      out.push_back(std::move(f));
    }
  }
  // NCCL_SOCKET_IFNAME set but no "Bootstrap : Using" line from that process.
  for (const auto& [k, p] : procs_) {
    auto it = p.env.find("NCCL_SOCKET_IFNAME");
    if (it == p.env.end() || !p.bootstrap.empty() || !any_error) continue;
    auto f = make("logs.socket_ifname_without_bootstrap", Layer::system_config, Severity::error, FindingRole::primary,
                  "NCCL_SOCKET_IFNAME=" + it->second + " is set but no 'Bootstrap : Using <if>' line follows on " +
                      who(p) + ": the interface was not found on this host");
    if (!p.host.empty()) f.subject.host = p.host;
    if (p.pid) f.subject.pid = *p.pid;
    if (p.launcher_rank) f.subject.rank = *p.launcher_rank;
    f.provenance.push_back(Provenance{p.source, std::nullopt, "NCCL_SOCKET_IFNAME set to " + it->second});
    f.fields = {{"NCCL_SOCKET_IFNAME", it->second}};
    f.supports.push_back({"wrong_network_interface", 10});
    out.push_back(std::move(f));
  }
  // P2P/IPC between ranks on different hosts: every P2P edge logged on host H
  // means NCCL placed both ends on H; two ranks of one communicator with one
  // device index on H, or a rank of it seen on another host, contradict that.
  // Ranks are the communicator's own (a job's world, data- and tensor-parallel
  // groups all have a rank 0), so every map is per communicator.
  using DevRanks = std::map<std::string, std::set<int>>;                    // dev -> ranks
  std::map<std::string, std::map<std::string, DevRanks>> on_host;           // comm -> host -> dev -> ranks
  std::map<std::string, std::map<int, std::set<std::string>>> rank_hosts;   // comm -> rank -> hosts
  std::vector<std::pair<const ProcessTopology*, const TransportEdge*>> p2p;
  // Ranks that logged their own comm-init line, by comm, the host name they logged and their device.
  std::map<std::string, std::map<std::string, DevRanks>> self_reported;
  for (const auto& [k, p] : procs_) {
    for (const auto& c : p.comms)
      if (c.rank >= 0 && !p.host.empty()) {
        const std::string comm = comm_identity(c);
        const std::string dev = std::to_string(c.nvml_dev.value_or(c.cuda_dev));
        rank_hosts[comm][c.rank].insert(p.host);
        on_host[comm][p.host][dev].insert(c.rank);
        self_reported[comm][p.host][dev].insert(c.rank);
      }
    for (const auto& e : p.edges) {
      if (e.transport.rfind("P2P", 0) != 0 || p.host.empty()) continue;
      on_host[e.comm][p.host][e.from_dev].insert(e.from_rank);
      on_host[e.comm][p.host][e.to_dev].insert(e.to_rank);
      p2p.emplace_back(&p, &e);
    }
  }
  const ProcessTopology* bad_p = nullptr;
  const TransportEdge* bad_e = nullptr;
  std::set<int> clash_best;
  for (const auto& [pp, e] : p2p) {
    bool conflict = false;
    std::set<int> clash;
    for (const auto& [dev, ranks] : on_host[e->comm][pp->host])
      if (ranks.size() > 1 && (ranks.count(e->to_rank) || ranks.count(e->from_rank))) {
        conflict = true;
        clash.insert(ranks.begin(), ranks.end());
      }
    const auto& hosts_of = rank_hosts[e->comm];
    auto rh = hosts_of.find(e->to_rank);
    if (rh != hosts_of.end() && !rh->second.count(pp->host)) conflict = true;
    // Of the edges touching a clash, the widest jump in rank numbers is the one
    // that crosses the node boundary (ranks are numbered node by node).
    if (conflict && (!bad_e || std::abs(e->to_rank - e->from_rank) > std::abs(bad_e->to_rank - bad_e->from_rank))) {
      bad_p = pp;
      bad_e = e;
      clash_best = clash;
    }
  }
  if (bad_e) {
    const auto* pp = bad_p;
    const auto* e = bad_e;
    auto f = make("logs.p2p_edge_across_hosts", Layer::nccl, Severity::critical, FindingRole::primary,
                  fmt::format("'{}[{}] -> {}[{}] via {}' logged on {} connects ranks that cannot share a host "
                              "(CUDA IPC across nodes): NCCL sees several nodes as one host",
                              e->from_rank, e->from_dev, e->to_rank, e->to_dev, e->transport, pp->host));
    f.subject.host = pp->host;
    f.subject.rank = e->from_rank;
    f.fields = {{"from_rank", e->from_rank}, {"to_rank", e->to_rank}, {"transport", e->transport},
                {"ranks_sharing_device", clash_best}};
    f.provenance.push_back(Provenance{pp->source, std::nullopt,
                                      fmt::format("{}[{}] -> {}[{}] via {}", e->from_rank, e->from_dev, e->to_rank,
                                                  e->to_dev, e->transport)});
    // Two ranks that each logged their own init under this host name on the
    // same GPU ordinal run on different machines with one name: the nodes
    // share a host name. Otherwise different names were taken for one host
    // (NCCL's host identity collided), a defect of NCCL.
    bool same_name = false;
    for (const auto& [dev, ranks] : self_reported[e->comm][pp->host])
      if (ranks.size() > 1) same_name = true;
    f.fields["same_host_name"] = same_name;
    if (same_name) {
      f.supports.push_back({"duplicate_hostname_across_nodes", 40});
      f.supports.push_back({"nccl_bug", 3});
    } else {
      f.supports.push_back({"nccl_bug", 40});
    }
    out.push_back(std::move(f));
  }
  // nNodes below the number of hosts the ranks of one communicator run on
  // (per comm: each host's tensor-parallel group is a one-node comm of the
  // same size as the others).
  std::map<std::string, std::pair<int, std::set<std::string>>> by_comm;  // comm -> (max nNodes, hosts)
  std::map<std::string, int> size_of;
  for (const auto& [k, p] : procs_)
    for (const auto& c : p.comms)
      if (c.nranks > 0) {
        const std::string id = comm_identity(c);
        auto& e = by_comm[id];
        size_of[id] = c.nranks;
        if (c.nnodes) e.first = std::max(e.first, *c.nnodes);
        if (!p.host.empty()) e.second.insert(p.host);
      }
  for (const auto& [id, e] : by_comm) {
    if (e.first <= 0 || static_cast<size_t>(e.first) >= e.second.size()) continue;
    const int n = size_of[id];
    auto f = make("logs.nnodes_below_hosts", Layer::nccl, Severity::error, FindingRole::primary,
                  fmt::format("NCCL reports nNodes {} for a {}-rank communicator, but its ranks log from {} hosts: "
                              "host identities collide (hostname prefix / NCCL_HOSTID)",
                              e.first, n, e.second.size()));
    f.fields = {{"nranks", n}, {"nnodes", e.first}, {"hosts", e.second}};
    f.supports.push_back({"nccl_bug", 20});
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace ccdiag::logs
