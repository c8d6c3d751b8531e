// Rules over host configuration evidence (host.*, gpu.device fabric): limits,
// modules, services and identities that make NCCL fail although every device
// is healthy. Each reads documented data fields (docs/decision-tree.md) and
// skips items whose fields are missing.
#include <algorithm>
#include <map>

#include "analysis/tree/rules/rules.hpp"
#include "ccdiag/evidence_kinds.hpp"

namespace ccdiag::rules {

namespace {

Hypothesis hyp(const char* cause, const Evidence* e, double w, std::string key, std::string why,
               std::optional<Severity> finding = std::nullopt, Layer layer = Layer::system_config) {
  Hypothesis h;
  h.cause = cause;
  h.culprit.host = e->subject.host;
  h.weight = w;
  h.evidence_key = std::move(key);
  h.finding_ids = {"tree." + std::string(cause)};
  h.why = std::move(why);
  if (finding) h.derived = derived_finding("tree." + std::string(cause), layer, *finding, h.why, h.culprit, {e});
  return h;
}

bool uses_rdma(const EvidenceSet& set) {
  const auto ports = set.of_kind("rdma.port");
  return !set.of_kind("log.net_ib").empty() || !set.findings_with("log.ib_").empty() ||
         std::any_of(ports.begin(), ports.end(), [](const Evidence* e) { return e->availability.is_ok(); });
}

// The host has no RDMA NIC (host.peermem counted none) and nothing shows
// verbs in use: memlock and GPUDirect do not matter there.
bool no_rdma_nic(const EvidenceSet& set, const Evidence* e) {
  if (uses_rdma(set)) return false;
  for (const auto* p : set.of_kind("host.peermem"))
    if (p->availability.is_ok() && p->subject.host == e->subject.host &&
        contract::HostPeermem::parse(p->data).rdma_devices == std::optional<int64_t>(0))
      return true;
  return false;
}

}  // namespace

void host_config(const EvidenceSet& set, std::vector<Hypothesis>& out) {
  // The kinds as their collectors write them (ccdiag/evidence_kinds.hpp). A
  // vote on the same observation as a config/gpu finding shares its key
  // (collectors/config/config_findings.cpp), so it counts once.
  // host.memlock {soft, hard}: bytes or "unlimited".
  for (const auto* e : set.of_kind("host.memlock")) {
    if (!e->availability.is_ok()) continue;
    const auto soft = contract::HostMemlock::parse(e->data).soft_bytes;
    if (!soft || no_rdma_nic(set, e)) continue;
    if (*soft >= 0 && *soft < (64LL << 20))
      out.push_back(hyp("memlock_limit_too_low", e, uses_rdma(set) ? 10 : 3, "host.memlock_low",
                        "max locked memory on " + host_name(e->subject) + " is " + std::to_string(*soft >> 10) +
                            " KiB: RDMA registration of NCCL buffers fails",
                        Severity::error));
    else
      out.push_back(hyp("memlock_limit_too_low", e, 0.1, "host.memlock_low", "memlock is unlimited or large"));
  }
  // host.peermem: GPUDirect RDMA needs nvidia_peermem, the legacy module or DMA-BUF.
  for (const auto* e : set.of_kind("host.peermem")) {
    if (!e->availability.is_ok()) continue;
    const auto p = contract::HostPeermem::parse(e->data);
    // Only GPUs and RDMA NICs together need a GPUDirect path.
    if (!p.gdr_possible || p.nvidia_gpus.value_or(0) == 0 || p.rdma_devices.value_or(0) == 0) continue;
    if (!*p.gdr_possible)
      out.push_back(hyp("gpudirect_rdma_module_missing", e, uses_rdma(set) ? 10 : 2, "host.peermem_missing",
                        "no nvidia-peermem module and no dma-buf on " + host_name(e->subject), Severity::error));
    else
      out.push_back(hyp("gpudirect_rdma_module_missing", e, 0.1, "host.peermem_missing", "GPUDirect RDMA support present"));
  }
  // host.fabric_manager {nvswitch_system, fabric_manager_running}.
  for (const auto* e : set.of_kind("host.fabric_manager")) {
    if (!e->availability.is_ok()) continue;
    const auto fm = contract::HostFabricManager::parse(e->data);
    if (!fm.nvswitch_system || !fm.fabric_manager_running || !*fm.nvswitch_system) continue;
    if (!*fm.fabric_manager_running)
      out.push_back(hyp("fabric_manager_not_running", e, 100, "host.fabric_manager_not_running",
                        "NVSwitch system " + host_name(e->subject) + " has no running nvidia-fabricmanager",
                        Severity::critical));
    else
      out.push_back(hyp("fabric_manager_not_running", e, 0.1, "host.fabric_manager_not_running", "the fabric manager runs"));
  }
  // gpu.device data.fabric {state_name, status}: registration with the NVLink fabric.
  for (const auto* e : set.of_kind("gpu.device")) {
    if (!e->availability.is_ok()) continue;
    const auto fab = contract::GpuFabric::of_device(e->data);
    if (!fab || fab->state_name.empty() || fab->state_name == "not_supported") continue;
    const bool ok_status = fab->status.value_or(0) == 0;
    if (fab->state_name != "completed" || !ok_status) {
      const std::string status = fab->status_name.empty() ? (ok_status ? "SUCCESS" : "error") : fab->status_name;
      auto h = hyp("fabric_manager_state", e, 150, "gpu_fabric",
                   "GPU " + e->subject.gpu.value_or("?") + " on " + host_name(e->subject) + " has fabric state " +
                       fab->state_name + " (status " + status + "): not registered with the NVLink fabric",
                   Severity::error, Layer::system_config);
      h.culprit.gpu = e->subject.gpu;
      out.push_back(std::move(h));
      break;
    }
  }
  // host.logind {remove_ipc}: the default RemoveIPC=yes unlinks a user's SHM
  // segments when their last session ends; a job started from a session that
  // then logs out loses NCCL's /dev/shm segments.
  for (const auto* e : set.of_kind("host.logind")) {
    if (!e->availability.is_ok()) continue;
    const auto r = bool_field(e->data, "remove_ipc");
    if (!r) continue;
    // RemoveIPC=yes is systemd's default on most hosts and harmless to ranks
    // started by root, a service or a scheduler: alone it is a lead; with
    // shared-memory segments failing it is the likely reason they vanished.
    const bool shm_failed = std::any_of(set.findings.begin(), set.findings.end(), [](const Finding& f) {
      return f.id.rfind("nccl.shm.", 0) == 0 || f.id.rfind("log.shm", 0) == 0;
    });
    // logind never removes the IPC objects of root or system users (uid below
    // 1000, SYS_UID_MAX on Debian and RHEL): ranks that all run as one of
    // those are out of its reach.
    bool ranks_seen = false, all_system = true;
    for (const auto* rp : set.of_kind("ranks.process")) {
      if (rp->subject.host != e->subject.host) continue;
      ranks_seen = true;
      const auto uid = int_field(rp->data, "uid");
      if (!uid || *uid >= 1000) all_system = false;
    }
    if (*r && ranks_seen && all_system) {
      out.push_back(hyp("removeipc_deletes_shm", e, 0.2, "logind_removeipc",
                        "RemoveIPC=yes on " + host_name(e->subject) + ", but every rank runs as root or a system user"));
      continue;
    }
    out.push_back(*r ? hyp("removeipc_deletes_shm", e, shm_failed ? 6 : 1.2, "logind_removeipc",
                           "systemd-logind RemoveIPC=yes on " + host_name(e->subject) +
                               (shm_failed ? " while shared-memory segments failed" : ""),
                           shm_failed ? Severity::warning : Severity::info)
                     : hyp("removeipc_deletes_shm", e, 0.1, "logind_removeipc", "RemoveIPC=no"));
  }
  // host.firewall {input_policy, allows_ephemeral}: NCCL opens random high
  // ports for bootstrap and sockets.
  for (const auto* e : set.of_kind("host.firewall")) {
    if (!e->availability.is_ok()) continue;
    const auto allows = bool_field(e->data, "allows_ephemeral");
    if (!allows) continue;
    if (!*allows)
      out.push_back(hyp("firewall_blocked_ports", e, 12, "firewall",
                        "the firewall on " + host_name(e->subject) + " drops inbound TCP on ephemeral ports (policy " +
                            str_field(e->data, "input_policy").value_or("?") + ")",
                        Severity::error));
    else
      out.push_back(hyp("firewall_blocked_ports", e, 0.2, "firewall", "ephemeral ports open"));
  }
  // host.resolve {name, addr}: what the hostname resolves to.
  // On one host every rank is local and loopback works (Debian's default
  // /etc/hosts maps the name to 127.0.1.1): no evidence at all for a job that
  // runs on this host alone. Across hosts the peers dial their own loopback;
  // a rank whose world is larger than its node's (WORLD_SIZE above
  // LOCAL_WORLD_SIZE) has peers on other hosts even when only this host's
  // bundle is in the inputs.
  bool other_nodes = set.hosts.size() >= 2;
  for (const auto* e : set.of_kind("ranks.process")) {
    const auto world = int_field(e->data, "world_size"), local = int_field(e->data, "local_world_size");
    if (world && local && *world > *local) other_nodes = true;
  }
  for (const auto* e : set.of_kind("host.resolve")) {
    if (!e->availability.is_ok() || !other_nodes) continue;
    const auto addr = str_field(e->data, "addr").value_or("");
    if (addr.rfind("127.", 0) == 0 || addr == "::1")
      out.push_back(hyp("hostname_resolves_to_loopback", e, set.hosts.size() >= 2 ? 20 : 6, "resolve",
                        "hostname " + str_field(e->data, "name").value_or("?") + " of " + host_name(e->subject) +
                            " resolves to " + addr + (set.hosts.size() >= 2 ? std::string()
                                                                             : " and its ranks have peers on other hosts"),
                        Severity::error));
  }
  // host.versions: kernel module vs user-space driver library.
  for (const auto* e : set.of_kind("host.versions")) {
    if (!e->availability.is_ok()) continue;
    const auto v = contract::HostVersions::parse(e->data);
    const auto kmod = v.driver_version, lib = v.user_driver_version;
    if (!kmod.empty() && !lib.empty() && kmod != lib)
      out.push_back(hyp("driver_library_mismatch", e, 100, "driver_lib:" + host_name(e->subject),
                        "kernel module " + kmod + " but user-space driver library " + lib + " on " +
                            host_name(e->subject),
                        Severity::critical));
  }
  // host.identity: two hosts NCCL cannot tell apart (same hostname, or the
  // same boot_id from a cloned image) share one host hash.
  std::map<std::string, std::vector<const Evidence*>> by_boot, by_short;
  for (const auto* e : set.of_kind("host.identity")) {
    if (!e->availability.is_ok()) continue;
    const auto hn = str_field(e->data, "hostname").value_or("");
    const auto boot = str_field(e->data, "boot_id").value_or("");
    if (!boot.empty()) by_boot[boot].push_back(e);
    if (!hn.empty()) by_short[hn.substr(0, hn.find('.'))].push_back(e);
  }
  for (auto* groups : {&by_boot, &by_short}) {
    for (const auto& [key, es] : *groups) {
      if (es.size() < 2 || es[0]->subject.host == es[1]->subject.host) continue;
      auto h = hyp("nccl_bug", es[1], 15, "host_identity_collision",
                   "hosts " + host_name(es[0]->subject) + " and " + host_name(es[1]->subject) + " share " +
                       (groups == &by_boot ? "boot_id " : "short hostname ") + key +
                       ": NCCL's host hash cannot tell them apart",
                   Severity::error, Layer::nccl);
      out.push_back(std::move(h));
      return;
    }
  }
}

}  // namespace ccdiag::rules
