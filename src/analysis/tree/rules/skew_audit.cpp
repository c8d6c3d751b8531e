// Cross-host (or, on one host, cross-rank) skew audit: every attribute that
// must be equal across a job (NCCL/CUDA/driver versions, NCCL_* settings, the
// net plugin, MTU, GID index, link rates, PCIe link width/speed) is collected
// per unit and the minority value names the outlier. With two units and two
// values there is no majority: the hypothesis is weaker and names no host.
#include <algorithm>
#include <map>
#include <set>

#include "analysis/tree/rules/rules.hpp"
#include "ccdiag/rank_job.hpp"

namespace ccdiag::rules {

namespace {

struct Observation {
  std::string unit;     // host, or host/pid when the audit is within one host
  Subject subject;
  std::string value;
  const Evidence* from;
};

struct Attribute {
  std::string name;                       // "nccl_version", "env NCCL_IB_GID_INDEX", "rdma active_mtu"
  std::vector<std::pair<std::string, double>> causes;
  Layer layer;
  std::vector<Observation> obs;
};

// The cause(s) a differing NCCL_* variable points at.
std::vector<std::pair<std::string, double>> env_causes(const std::string& var) {
  if (var == "NCCL_IB_GID_INDEX") return {{"roce_gid_index_mismatch", 100}};
  if (var == "NCCL_SOCKET_IFNAME") return {{"wrong_network_interface", 10}};
  if (var == "NCCL_NET_PLUGIN" || var == "NCCL_NET") return {{"net_plugin_mismatch", 15}};
  if (var == "NCCL_IB_HCA") return {{"nccl_config_error", 8}, {"unusable_hca_selected", 4}};
  return {{"nccl_config_error", 60}};
}

// NCCL_* variables that change what NCCL reports or where, not what the job
// does: a rank run with NCCL_DEBUG=INFO, or one that a RAS client reached
// through NCCL_RAS_ADDR, is no skew.
bool diagnostic_only(const std::string& var) {
  static const char* const k[] = {"NCCL_DEBUG",          "NCCL_DEBUG_SUBSYS",    "NCCL_DEBUG_FILE",
                                  "NCCL_DEBUG_TIMESTAMP_FORMAT", "NCCL_DEBUG_TIMESTAMP_LEVELS",
                                  "NCCL_RAS_ADDR",       "NCCL_RAS_ENABLE",      "NCCL_RAS_TIMEOUT_FACTOR",
                                  "NCCL_TOPO_DUMP_FILE", "NCCL_GRAPH_DUMP_FILE", "NCCL_TOPO_DUMP_FILE_RANK",
                                  "NCCL_PROFILER_PLUGIN", "NCCL_WARN_ENABLE_DEBUG_INFO"};
  return std::find(std::begin(k), std::end(k), var) != std::end(k);
}

// The job a rank process belongs to, from what every rank of one launch
// shares (the rendezvous address and torchelastic's run id): ranks of two
// jobs on one host (two small jobs on a shared node, a test harness beside a
// job) are audited apart. Empty when the environment names none.
std::string job_of(const Evidence& e) { return e.data.contains("env") ? rank_job_key(e.data["env"]) : ""; }

}  // namespace

void skew_audit(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  std::map<std::string, Attribute> attrs;
  std::set<std::string> hosts_seen;
  for (const auto& e : set.evidence)
    if (e.subject.host && e.kind.rfind("log.", 0) == 0) hosts_seen.insert(*e.subject.host);
  for (const auto& h : set.hosts) hosts_seen.insert(h);
  const bool per_host = hosts_seen.size() >= 2;
  auto unit_of = [&](const Subject& s) {
    std::string u = s.host.value_or("?");
    if (!per_host) u += "/" + (s.rank ? "rank" + std::to_string(*s.rank) : s.pid ? std::to_string(*s.pid) : "");
    return u;
  };
  auto observe = [&](const std::string& name, Layer layer, std::vector<std::pair<std::string, double>> causes,
                     const Evidence* e, const std::string& value, const std::string& unit_suffix = "") {
    auto& a = attrs[name];
    if (a.name.empty()) a = Attribute{name, std::move(causes), layer, {}};
    const std::string u = unit_of(e->subject) + unit_suffix;
    for (const auto& o : a.obs)
      if (o.unit == u) return;  // first value per unit (every rank prints the same line)
    a.obs.push_back(Observation{u, e->subject, value, e});
  };

  for (const auto* e : set.of_kind("host.versions")) {
    if (!e->availability.is_ok()) continue;
    if (auto v = str_field(e->data, "nccl_version"); v && !v->empty())
      observe("NCCL version", Layer::nccl, {{"nccl_version_mismatch", 150}}, e, *v);
    if (auto v = str_field(e->data, "cuda_toolkit_version"); v && !v->empty())
      observe("CUDA version", Layer::nccl, {{"nccl_version_mismatch", 4}}, e, *v);
    if (auto v = str_field(e->data, "driver_version"); v && !v->empty())
      observe("driver version", Layer::nccl, {{"nccl_version_mismatch", 3}}, e, *v);
  }
  for (const auto* e : set.of_kind("log.nccl_version"))
    if (auto v = str_field(e->data, "version")) observe("NCCL version", Layer::nccl, {{"nccl_version_mismatch", 150}}, e, *v);
  // NCCL_* settings: from logs ("set by environment to") and from rank
  // evidence (ranks.process data.env, allowlisted NCCL_* only).
  std::map<std::string, const Evidence*> units_with_env;
  for (const auto* e : set.of_kind("log.nccl_env")) {
    const auto name = str_field(e->data, "name"), value = str_field(e->data, "value");
    if (!name || !value) continue;
    units_with_env.emplace(unit_of(e->subject), e);
    if (diagnostic_only(*name)) continue;
    observe("env " + *name, Layer::nccl, env_causes(*name), e, *value);
  }
  std::set<std::string> jobs;
  std::map<std::string, std::string> job_of_unit, job_of_attr;  // "" for log units
  for (const auto* e : set.of_kind("ranks.process"))
    if (e->availability.is_ok()) jobs.insert(job_of(*e));
  for (const auto* e : set.of_kind("ranks.process")) {
    if (!e->availability.is_ok() || !e->data.contains("env") || !e->data["env"].is_object()) continue;
    // Several jobs on the host: each is its own audit (its own "unset" set).
    const std::string job = jobs.size() > 1 ? " (job " + job_of(*e) + ")" : "";
    units_with_env.emplace(unit_of(e->subject) + job, e);
    job_of_unit[unit_of(e->subject) + job] = job;
    for (const auto& [k, v] : e->data["env"].items())
      if (k.rfind("NCCL_", 0) == 0 && v.is_string() && !diagnostic_only(k)) {
        job_of_attr["env " + k + job] = job;
        observe("env " + k + job, Layer::nccl, env_causes(k), e, v.get<std::string>(), job);
      }
  }
  for (const auto* e : set.of_kind("log.net_plugin")) {
    const auto state = str_field(e->data, "state").value_or("");
    observe("net plugin", Layer::nccl, {{"net_plugin_mismatch", 200}}, e,
            state == "loaded" ? str_field(e->data, "name").value_or("loaded") : "none");
  }
  for (const auto* e : set.of_kind("rdma.port")) {
    if (!e->availability.is_ok()) continue;
    const std::string port = e->subject.nic.value_or("?") + "/" + std::to_string(e->subject.port.value_or(1));
    // The rdma collector reads sysfs, which has no active MTU or GID index:
    // the MTU is net.link's (RoCE follows the netdev), the GID index NCCL_IB_GID_INDEX.
    if (auto v = str_field(e->data, "rate"))
      observe("RDMA link rate", Layer::hardware, {{"nic_link_flapping", 6}, {"pcie_link_degraded", 2}}, e, *v);
  }
  // A netdev behind a RoCE port (rdma.port netdevs) sets that port's RDMA path
  // MTU: its skew weighs like an RDMA MTU skew.
  std::set<std::string> rdma_netdevs;
  for (const auto* e : set.of_kind("rdma.port"))
    if (e->data.is_object() && e->data.contains("netdevs") && e->data["netdevs"].is_array())
      for (const auto& n : e->data["netdevs"])
        if (n.is_string()) rdma_netdevs.insert(n.get<std::string>());
  for (const auto* e : set.of_kind("net.link")) {
    if (!e->availability.is_ok()) continue;
    const bool rdma = e->subject.nic && rdma_netdevs.count(*e->subject.nic);
    if (auto v = str_field(e->data, "mtu")) observe("netdev MTU " + e->subject.nic.value_or(""), Layer::transport,
                                                    {{"mtu_mismatch", rdma ? 100.0 : 60.0}}, e, *v);
  }

  for (auto& [name, a] : attrs) {
    // Env settings: a unit that logs NCCL_* settings but not this one has it unset.
    if (name.rfind("env ", 0) == 0) {
      std::set<std::string> have;
      for (const auto& o : a.obs) have.insert(o.unit);
      const auto aj = job_of_attr.find(name);
      for (const auto& [u, e] : units_with_env) {
        const auto uj = job_of_unit.find(u);
        if ((aj == job_of_attr.end() ? "" : aj->second) != (uj == job_of_unit.end() ? "" : uj->second)) continue;
        if (!have.count(u)) a.obs.push_back(Observation{u, e->subject, "<unset>", e});
      }
    }
    std::map<std::string, std::vector<const Observation*>> by_value;
    for (const auto& o : a.obs) by_value[o.value].push_back(&o);
    size_t units = a.obs.size();
    if (by_value.size() < 2 || units < 2) continue;
    std::string majority;
    size_t most = 0;
    bool tie = false;
    for (const auto& [v, os] : by_value) {
      if (os.size() > most) most = os.size(), majority = v, tie = false;
      else if (os.size() == most) tie = true;
    }
    for (const auto& [v, os] : by_value) {
      if (v == majority || os.empty()) continue;
      for (const auto* o : os) {
        for (const auto& [cause, w] : a.causes) {
          Hypothesis h;
          h.cause = cause;
          if (!tie) h.culprit = o->subject;
          h.culprit.pid.reset();
          h.culprit.gpu.reset();
          h.weight = tie ? std::max(1.5, w / 4) : w;
          h.evidence_key = "skew:" + name;
          h.finding_ids = {"tree.skew"};
          h.why = name + " differs: " + o->unit + " has " + v + " while " + std::to_string(most) + " other(s) have " +
                  majority;
          h.derived = derived_finding("tree.skew", a.layer, Severity::error, h.why, h.culprit, {o->from});
          h.derived->fields = {{"attribute", name}, {"value", v}, {"majority", majority}, {"unit", o->unit}};
          out.push_back(std::move(h));
        }
      }
    }
  }
}

}  // namespace ccdiag::rules
