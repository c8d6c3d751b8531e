#include "collectors/gpu/gpu_findings.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "collectors/gpu/gpu_names.hpp"

namespace ccdiag {

namespace {

using nlohmann::json;

// Typed reads that never throw: a field of the wrong type is absent.
const json* field(const json& j, const char* k) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(k);
  return it == j.end() ? nullptr : &*it;
}
std::optional<uint64_t> u64(const json& j, const char* k) {
  const json* v = field(j, k);
  if (!v || !v->is_number_integer()) return std::nullopt;
  if (v->is_number_unsigned()) return v->get<uint64_t>();
  const int64_t s = v->get<int64_t>();
  if (s < 0) return std::nullopt;
  return static_cast<uint64_t>(s);
}
std::optional<double> num(const json& j, const char* k) {
  const json* v = field(j, k);
  if (!v || !v->is_number()) return std::nullopt;
  return v->get<double>();
}
std::optional<bool> boolean(const json& j, const char* k) {
  const json* v = field(j, k);
  if (!v || !v->is_boolean()) return std::nullopt;
  return v->get<bool>();
}
std::optional<std::string> str(const json& j, const char* k) {
  const json* v = field(j, k);
  if (!v || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}
const json& obj(const json& j, const char* k) {
  static const json empty = json::object();
  const json* v = field(j, k);
  return v && v->is_object() ? *v : empty;
}
const json& arr(const json& j, const char* k) {
  static const json empty = json::array();
  const json* v = field(j, k);
  return v && v->is_array() ? *v : empty;
}

Finding make(const Evidence& e, std::string id, Severity sev, std::string summary,
             std::vector<CauseSupport> supports) {
  Finding f = finding_from(e, std::move(id), Layer::hardware, sev, std::move(summary));
  f.supports = std::move(supports);
  return f;
}

std::string gpu_name(const Evidence& e) {
  const std::string who = e.subject.gpu.value_or("?");
  if (auto i = u64(e.data, "index")) return fmt::format("GPU {} ({})", *i, who);
  return "GPU " + who;
}

std::string pid_note(const Evidence& e) {
  std::vector<std::string> pids;
  for (const auto& p : arr(e.data, "processes"))
    if (auto pid = u64(p, "pid")) pids.push_back(std::to_string(*pid));
  if (pids.empty()) return "";
  return fmt::format(" (pid {})", fmt::join(pids, ", "));
}

void nvml_findings(const Evidence& e, std::vector<Finding>& out) {
  if (e.availability.state == AvailabilityState::timeout) {
    // A query that blocks is itself a symptom: NVML waits on a GPU or driver
    // that stopped answering (Xid 79 / 119 states).
    out.push_back(make(e, "gpu.nvml.unresponsive", Severity::error,
                       "NVML is unresponsive: " + e.availability.reason + " (driver or a GPU stopped answering)",
                       {{"gpu_hung_kernel", 3.0}, {"gpu_fell_off_bus", 3.0}}));
    return;
  }
  const std::string ret = str(e.data, "init_return").value_or("");
  if (ret == "LIB_RM_VERSION_MISMATCH" || e.availability.reason.find("LIB_RM_VERSION_MISMATCH") != std::string::npos)
    out.push_back(make(e, "gpu.nvml.driver_mismatch", Severity::error,
                       "NVML library and kernel driver versions differ: " + e.availability.reason,
                       {{"driver_library_mismatch", 20.0}}));
}

void device_findings(const Evidence& e, std::vector<Finding>& out) {
  const std::string who = gpu_name(e);
  if (e.availability.state == AvailabilityState::timeout) {
    auto f = make(e, "gpu.nvml.device_unresponsive", Severity::error,
                  who + ": NVML query never returned: " + e.availability.reason,
                  {{"gpu_hung_kernel", 4.0}, {"gpu_fell_off_bus", 4.0}});
    if (auto c = str(e.data, "hung_call")) f.fields["hung_call"] = *c;
    out.push_back(std::move(f));
    return;
  }
  if (!e.availability.is_ok()) return;
  const json& d = e.data;
  if (boolean(d, "lost").value_or(false)) {
    auto f = make(e, "gpu.lost", Severity::critical,
                  who + " has fallen off the bus: NVML answers GPU_IS_LOST" + pid_note(e),
                  {{"gpu_fell_off_bus", 30.0}});
    f.fields["errors"] = obj(d, "errors");
    out.push_back(std::move(f));
    return;  // nothing else it reports can be trusted
  }
  if (boolean(d, "reset_required").value_or(false))
    out.push_back(make(e, "gpu.reset_required", Severity::error, who + " needs a reset (NVML RESET_REQUIRED)" + pid_note(e),
                       {{"gpu_hung_kernel", 3.0}, {"gpu_ecc_or_memory_fault", 2.0}}));
  if (auto action = str(d, "recovery_action"); action && *action != "none")
    out.push_back(make(e, "gpu.recovery_action", Severity::error,
                       who + ": the driver asks for recovery action " + *action,
                       {{"gpu_hung_kernel", 2.0}, {"gpu_ecc_or_memory_fault", 2.0}}));

  // Memory.
  const json& ecc = obj(d, "ecc");
  if (auto v = u64(ecc, "volatile_uncorrected"); v && *v > 0) {
    auto f = make(e, "gpu.ecc.uncorrectable", Severity::error,
                  fmt::format("{}: {} uncorrectable ECC error(s) since the driver loaded{}", who, *v, pid_note(e)),
                  {{"gpu_ecc_or_memory_fault", 20.0}});
    f.fields["volatile_uncorrected"] = *v;
    out.push_back(std::move(f));
  }
  const json& rr = obj(d, "remapped_rows");
  if (boolean(rr, "failure").value_or(false)) {
    out.push_back(make(e, "gpu.remap.failure", Severity::critical, who + ": row remapping failed (no spare rows left)",
                       {{"gpu_ecc_or_memory_fault", 40.0}}));
  } else if (auto unc = u64(rr, "uncorrectable"); unc && *unc >= 512) {
    out.push_back(make(e, "gpu.remap.exhausted", Severity::error,
                       fmt::format("{}: {} rows remapped for uncorrectable errors (limit 512)", who, *unc),
                       {{"gpu_ecc_or_memory_fault", 15.0}}));
  }
  if (boolean(rr, "pending").value_or(false)) {
    auto f = make(e, "gpu.remap.pending", Severity::warning,
                  who + ": a row remap is pending; the GPU must be reset to apply it",
                  {{"gpu_ecc_or_memory_fault", 4.0}});
    if (auto unc = u64(rr, "uncorrectable")) f.fields["uncorrectable_rows"] = *unc;
    out.push_back(std::move(f));
  }
  const json& rp = obj(d, "retired_pages");
  const uint64_t sbe = u64(rp, "single_bit").value_or(0), dbe = u64(rp, "double_bit").value_or(0);
  if (dbe >= 15 || sbe + dbe >= 63)
    out.push_back(make(e, "gpu.retired_pages.limit", Severity::error,
                       fmt::format("{}: {} pages retired ({} for double-bit errors)", who, sbe + dbe, dbe),
                       {{"gpu_ecc_or_memory_fault", 10.0}}));
  if (boolean(rp, "pending").value_or(false))
    out.push_back(make(e, "gpu.retired_pages.pending", Severity::warning,
                       who + ": a page retirement is pending until the next driver reload",
                       {{"gpu_ecc_or_memory_fault", 3.0}}));

  // Slowness.
  if (auto reasons = u64(d, "clocks_event_reasons"); reasons && (*reasons & gpu::kSlowdownReasons)) {
    std::string temp;
    if (auto t = u64(d, "temperature_c")) temp = fmt::format(" at {} C", *t);
    auto f = make(e, "gpu.throttled", Severity::warning,
                  fmt::format("{}: clocks cut by {}{}; a rank on it runs slow{}", who,
                              fmt::join(gpu::clocks_event_names(*reasons & gpu::kSlowdownReasons), ", "), temp,
                              pid_note(e)),
                  {{"straggler_or_timeout_too_short", 3.0}});
    f.fields["clocks_event_reasons"] = fmt::format("0x{:x}", *reasons);
    out.push_back(std::move(f));
  }
}

// Per host: fabric state across GPUs (one finding for the host, naming the GPUs).
void fabric_findings(const std::vector<const Evidence*>& devices, std::vector<Finding>& out) {
  std::vector<const Evidence*> not_started, in_progress, failed, unhealthy, limited;
  for (const Evidence* e : devices) {
    const json& fab = obj(e->data, "fabric");
    const auto state = u64(fab, "state");
    if (!state) continue;
    if (*state == 1) not_started.push_back(e);
    else if (*state == 2) in_progress.push_back(e);
    else if (*state == 3 && u64(fab, "status").value_or(0) != 0) failed.push_back(e);
    if (*state == 3) {
      const auto summary = u64(fab, "health_summary").value_or(0);
      if (summary == 2) unhealthy.push_back(e);
      else if (summary == 3) limited.push_back(e);
    }
  }
  auto list = [](const std::vector<const Evidence*>& v) {
    std::vector<std::string> s;
    for (const auto* e : v) s.push_back(e->subject.gpu.value_or("?"));
    return fmt::format("{}", fmt::join(s, ", "));
  };
  auto add = [&](const std::vector<const Evidence*>& v, const char* id, Severity sev, const std::string& what,
                 std::vector<CauseSupport> sup) {
    if (v.empty()) return;
    Finding f = make(*v.front(), id, sev, fmt::format("{} of {} GPU(s) {}: {}", v.size(), devices.size(), what, list(v)),
                     std::move(sup));
    f.subject.gpu.reset();
    f.subject.pid.reset();
    f.fields["gpus"] = json::array();
    for (const auto* e : v) f.fields["gpus"].push_back(e->subject.gpu.value_or("?"));
    out.push_back(std::move(f));
  };
  add(not_started, "gpu.fabric.not_started", Severity::error,
      "never joined the NVLink fabric (state NOT_STARTED: is nvidia-fabricmanager running?)",
      {{"fabric_manager_not_running", 150.0}});
  add(in_progress, "gpu.fabric.in_progress", Severity::warning, "still joining the NVLink fabric (state IN_PROGRESS)",
      {{"fabric_manager_not_running", 3.0}, {"fabric_manager_state", 2.0}});
  add(failed, "gpu.fabric.failed", Severity::error, "finished fabric registration with an error status",
      {{"fabric_manager_state", 15.0}});
  add(unhealthy, "gpu.fabric.unhealthy", Severity::error, "report an unhealthy NVLink fabric",
      {{"fabric_manager_state", 8.0}, {"nvlink_down_or_degraded", 2.0}});
  add(limited, "gpu.fabric.limited_capacity", Severity::warning, "report a fabric with limited capacity",
      {{"fabric_manager_state", 3.0}, {"nvlink_down_or_degraded", 2.0}});
}

struct LinkView {
  const Evidence* e;
  uint64_t link;
  bool active;
};

void nvlink_findings(const std::vector<const Evidence*>& links, std::vector<Finding>& out) {
  // Active-link count per GPU, compared with the best GPU on the same host:
  // on an HGX board every GPU has the same number of links up.
  std::map<std::string, std::vector<LinkView>> by_gpu;
  for (const Evidence* e : links) {
    if (!e->availability.is_ok()) continue;
    auto l = u64(e->data, "link");
    auto a = boolean(e->data, "active");
    if (!l || !a) continue;
    by_gpu[e->subject.gpu.value_or("?")].push_back({e, *l, *a});
  }
  size_t best = 0;
  for (const auto& [g, v] : by_gpu) best = std::max<size_t>(best, std::count_if(v.begin(), v.end(), [](const LinkView& x) { return x.active; }));
  for (const auto& [g, v] : by_gpu) {
    const size_t active = std::count_if(v.begin(), v.end(), [](const LinkView& x) { return x.active; });
    if (best == 0 || active >= best) continue;
    std::vector<uint64_t> down;
    for (const auto& x : v)
      if (!x.active) down.push_back(x.link);
    Finding f = make(*v.front().e, "nvlink.down", Severity::error,
                     fmt::format("GPU {}: {} of {} NVLinks up, its peers have {}; link(s) {} down", g, active, v.size(),
                                 best, fmt::join(down, ", ")),
                     {{"nvlink_down_or_degraded", 40.0}});
    f.fields["inactive_links"] = down;
    f.fields["active_links"] = active;
    f.fields["expected_active_links"] = best;
    out.push_back(std::move(f));
  }

  // Counters rising between the two samples (DCGM: replay/recovery >= 1 is a
  // failure; CRC only at >= 100/s).
  for (const auto& [g, v] : by_gpu) {
    std::vector<std::string> hard, crc_fast, crc_slow;
    json detail = json::array();
    for (const auto& x : v) {
      const json& t0 = obj(x.e->data, "counters_t0");
      const json& t1 = obj(x.e->data, "counters_t1");
      const double secs = std::max(0.001, u64(x.e->data, "interval_ms").value_or(1000) / 1000.0);
      auto delta = [&](const char* k) -> uint64_t {
        auto a = u64(t0, k), b = u64(t1, k);
        return (a && b && *b > *a) ? *b - *a : 0;  // a drop is a reset, not errors
      };
      const uint64_t replay = delta("replay"), recovery = delta("recovery");
      const uint64_t crc = delta("crc_flit") + delta("crc_data");
      if (replay + recovery + crc == 0) continue;
      detail.push_back({{"link", x.link}, {"replay", replay}, {"recovery", recovery}, {"crc", crc}, {"interval_s", secs}});
      const std::string name = fmt::format("link {} (+{} replay, +{} recovery, +{} CRC in {:.1f} s)", x.link, replay,
                                           recovery, crc, secs);
      if (replay + recovery > 0) hard.push_back(name);
      else if (crc / secs >= kCrcErrorRatePerS) crc_fast.push_back(name);
      else crc_slow.push_back(name);
    }
    if (detail.empty()) continue;
    const Evidence& e = *v.front().e;
    if (!hard.empty() || !crc_fast.empty()) {
      std::vector<std::string> all = hard;
      all.insert(all.end(), crc_fast.begin(), crc_fast.end());
      Finding f = make(e, "nvlink.errors_rising", Severity::error,
                       fmt::format("GPU {}: NVLink errors rising: {}", g, fmt::join(all, "; ")),
                       {{"nvlink_down_or_degraded", 10.0}});
      f.fields["links"] = detail;
      out.push_back(std::move(f));
    } else {
      Finding f = make(e, "nvlink.crc_rising", Severity::warning,
                       fmt::format("GPU {}: NVLink CRC errors rising slowly: {}", g, fmt::join(crc_slow, "; ")),
                       {{"nvlink_down_or_degraded", 2.0}});
      f.fields["links"] = detail;
      out.push_back(std::move(f));
    }
  }
}

void p2p_test_findings(const Evidence& e, std::vector<Finding>& out) {
  if (!e.availability.is_ok() || str(e.data, "source").value_or("") != "cuda") return;
  const json& pairs = arr(e.data, "pairs");
  // Median bandwidth per expected path, to spot a pair far below its peers.
  std::map<std::string, std::vector<double>> bw;
  for (const auto& p : pairs)
    if (str(p, "status").value_or("") == "ok")
      if (auto b = num(p, "bandwidth_gbps")) bw[str(p, "expected_path").value_or("unknown")].push_back(*b);
  std::map<std::string, double> median;
  for (auto& [path, v] : bw) {
    if (v.size() < 3) continue;
    std::sort(v.begin(), v.end());
    median[path] = v[v.size() / 2];
  }
  for (const auto& p : pairs) {
    const std::string a = str(p, "a").value_or("?"), b = str(p, "b").value_or("?");
    const std::string path = str(p, "expected_path").value_or("unknown");
    const std::string status = str(p, "status").value_or("");
    Evidence sub = e;
    sub.subject.gpu = a;
    auto with_pair = [&](Finding f) {
      f.fields["a"] = a;
      f.fields["b"] = b;
      f.fields["expected_path"] = path;
      f.provenance.front().excerpt = fmt::format("{} <-> {}", a, b);
      out.push_back(std::move(f));
    };
    if (status == "timeout") {
      std::vector<CauseSupport> sup;
      if (path == "nvlink") sup = {{"nvlink_down_or_degraded", 6.0}, {"gpu_driver_p2p_bug", 3.0}};
      else sup = {{"iommu_blocks_p2p", 6.0}, {"pcie_acs_p2p_blocked", 6.0}, {"gpu_driver_p2p_bug", 2.0}};
      with_pair(make(sub, "gpu.p2p.copy_hang", Severity::critical,
                     fmt::format("P2P copy {} <-> {} ({} path) never completed: {}", a, b, path,
                                 str(p, "reason").value_or("timeout")),
                     std::move(sup)));
    } else if (status == "error") {
      with_pair(make(sub, "gpu.p2p.copy_failed", Severity::error,
                     fmt::format("P2P copy {} <-> {} failed: {}", a, b, str(p, "reason").value_or("?")),
                     {{"gpu_driver_p2p_bug", 3.0}}));
    } else if (status == "not_accessible" && path == "nvlink") {
      // NVML says NVLink P2P is fine, CUDA refuses peer access: on NVSwitch
      // systems this is what a missing or failed Fabric Manager looks like.
      with_pair(make(sub, "gpu.p2p.no_peer_access", Severity::error,
                     fmt::format("CUDA refuses peer access {} <-> {} although NVML reports NVLink P2P", a, b),
                     {{"fabric_manager_not_running", 3.0}, {"gpu_driver_p2p_bug", 3.0}}));
    } else if (status == "ok") {
      const auto gbps = num(p, "bandwidth_gbps");
      if (!gbps) continue;
      const auto m = median.find(path);
      const bool below_peers = m != median.end() && *gbps < 0.5 * m->second;
      if (path == "nvlink" && (*gbps < kMinNvlinkGbps || below_peers)) {
        with_pair(make(sub, "gpu.p2p.slow", Severity::error,
                       fmt::format("P2P {} <-> {}: {:.1f} GB/s where NVLink is expected (peers' median {:.0f} GB/s)", a, b,
                                   *gbps, m == median.end() ? 0.0 : m->second),
                       {{"nvlink_down_or_degraded", 8.0}}));
      } else if (path != "local" && (*gbps < kMinPcieGbps || below_peers)) {
        with_pair(make(sub, "gpu.p2p.slow", Severity::warning,
                       fmt::format("P2P {} <-> {}: {:.1f} GB/s over {} (peers' median {:.0f} GB/s)", a, b, *gbps, path,
                                   m == median.end() ? 0.0 : m->second),
                       {{"pcie_link_degraded", 3.0}, {"iommu_blocks_p2p", 2.0}}));
      }
    }
  }
}

}  // namespace

std::vector<Finding> gpu_findings(const std::vector<Evidence>& evidence) {
  std::vector<Finding> out;
  std::map<std::string, std::vector<const Evidence*>> devices_by_host, links_by_host;
  for (const auto& e : evidence) {
    const std::string host = e.subject.host.value_or("");
    if (e.kind == "gpu.nvml") nvml_findings(e, out);
    else if (e.kind == "gpu.device") {
      device_findings(e, out);
      if (e.availability.is_ok() && !boolean(e.data, "lost").value_or(false)) devices_by_host[host].push_back(&e);
    } else if (e.kind == "nvlink.link") links_by_host[host].push_back(&e);
    else if (e.kind == "gpu.p2p") p2p_test_findings(e, out);
  }
  for (const auto& [host, devs] : devices_by_host) fabric_findings(devs, out);
  for (const auto& [host, links] : links_by_host) nvlink_findings(links, out);
  return out;
}

}  // namespace ccdiag
