#include "collectors/gpu/nvml_probe.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "collectors/gpu/gpu_names.hpp"
#include "collectors/gpu/nvml_api.hpp"
#include "sys/probe_runner.hpp"

namespace ccdiag {

namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// A page shared with the probe children (MAP_SHARED survives fork): each child
// writes the NVML call it is about to make into its slot, so after a timeout
// the parent can say which call never returned.
class CallTrace {
 public:
  static constexpr size_t kSlotSize = 128;
  explicit CallTrace(size_t slots) : size_(std::max<size_t>(slots, 1) * kSlotSize) {
    void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
    if (base_) std::memset(base_, 0, size_);
  }
  ~CallTrace() {
    if (base_) ::munmap(base_, size_);
  }
  CallTrace(const CallTrace&) = delete;
  CallTrace& operator=(const CallTrace&) = delete;

  char* slot(size_t i) const { return base_ && (i + 1) * kSlotSize <= size_ ? base_ + i * kSlotSize : nullptr; }
  std::string read(size_t i) const {
    const char* s = slot(i);
    return s ? std::string(s, ::strnlen(s, kSlotSize - 1)) : std::string();
  }

 private:
  size_t size_;
  char* base_ = nullptr;
};

// One NVML session inside a probe child.
struct Session {
  nvml::Api api;
  char* slot = nullptr;

  template <class Fn, class... A>
  nvml::Return call(const char* name, Fn fn, A... args) {
    if (!fn) return nvml::ERROR_FUNCTION_NOT_FOUND;
    if (slot) std::snprintf(slot, CallTrace::kSlotSize, "%s", name);
    const nvml::Return r = fn(args...);
    if (slot) slot[0] = '\0';
    return r;
  }

  nvml::Return init(std::string* which) {
    if (api.InitWithFlags) {
      *which = "nvmlInitWithFlags";
      // NO_GPUS: a host whose GPUs all fell off the bus still initialises, so
      // the devices can be listed and reported as lost.
      return call("nvmlInitWithFlags", api.InitWithFlags, nvml::kInitFlagNoGpus);
    }
    *which = "nvmlInit_v2";
    return call("nvmlInit_v2", api.Init_v2);
  }
};

// Probe children must not outlive the process that waits for them: when an
// outer deadline kills the collector, its NVML children go with it.
void die_with_parent() { ::prctl(PR_SET_PDEATHSIG, SIGKILL); }

std::string bdf_of(const nvml::PciInfo& pci) {
  const std::string raw(pci.busId, ::strnlen(pci.busId, sizeof pci.busId));
  if (auto b = gpu::normalize_bdf(raw)) return *b;
  return raw;
}

bool is_absent(nvml::Return r) {
  return r == nvml::ERROR_NOT_SUPPORTED || r == nvml::ERROR_FUNCTION_NOT_FOUND;
}

// Stage 1: load, init, enumerate.
json stage_enumerate(const std::string& library, char* slot) {
  die_with_parent();
  if (slot) std::snprintf(slot, CallTrace::kSlotSize, "dlopen %s", library.c_str());
  auto api = nvml::load_api(library);
  if (!api) return {{"status", "unavailable"}, {"reason", api.error().message}, {"detail", api.error().hint}};
  Session s{std::move(*api), slot};
  json out{{"library", library}, {"library_dir", s.api.lib.origin()}};
  std::string init_call;
  const nvml::Return rc = s.init(&init_call);
  out["init_call"] = init_call;
  out["init_return"] = nvml::return_name(rc);
  if (rc != nvml::SUCCESS) {
    out["status"] = rc == nvml::ERROR_DRIVER_NOT_LOADED ? "unavailable" : "error";
    out["reason"] = init_call + ": " + s.api.error_string(rc);
    return out;
  }
  char buf[nvml::kDriverVersionLen] = {};
  if (s.call("nvmlSystemGetDriverVersion", s.api.SystemGetDriverVersion, buf, nvml::kDriverVersionLen) == 0)
    out["driver_version"] = std::string(buf, ::strnlen(buf, sizeof buf));
  int cuda = 0;
  if (s.call("nvmlSystemGetCudaDriverVersion", s.api.SystemGetCudaDriverVersion, &cuda) == 0)
    out["cuda_driver_version"] = cuda;
  unsigned count = 0;
  const nvml::Return crc = s.call("nvmlDeviceGetCount_v2", s.api.DeviceGetCount_v2, &count);
  if (crc != nvml::SUCCESS) {
    out["status"] = "error";
    out["reason"] = "nvmlDeviceGetCount_v2: " + s.api.error_string(crc);
    return out;
  }
  out["device_count"] = count;
  json devices = json::array();
  for (unsigned i = 0; i < count && i < 64; ++i) {
    json d{{"index", i}};
    nvml::Device h = nullptr;
    const nvml::Return hr = s.call("nvmlDeviceGetHandleByIndex_v2", s.api.DeviceGetHandleByIndex_v2, i, &h);
    d["handle_return"] = nvml::return_name(hr);
    if (hr == nvml::SUCCESS) {
      nvml::PciInfo pci{};
      if (s.call("nvmlDeviceGetPciInfo_v3", s.api.DeviceGetPciInfo_v3, h, &pci) == 0) d["bdf"] = bdf_of(pci);
      char u[nvml::kUuidLen] = {};
      if (s.call("nvmlDeviceGetUUID", s.api.DeviceGetUUID, h, u, nvml::kUuidLen) == 0) d["uuid"] = std::string(u, ::strnlen(u, sizeof u));
      char n[nvml::kNameLen] = {};
      if (s.call("nvmlDeviceGetName", s.api.DeviceGetName, h, n, nvml::kNameLen) == 0) d["name"] = std::string(n, ::strnlen(n, sizeof n));
    }
    devices.push_back(std::move(d));
  }
  out["devices"] = std::move(devices);
  s.call("nvmlShutdown", s.api.Shutdown);
  out["status"] = "ok";
  return out;
}

struct LinkCounters {
  json read(Session& s, nvml::Device h, unsigned link) {
    json c = json::object();
    static const std::pair<int, const char*> counters[] = {{nvml::kNvLinkErrReplay, "replay"},
                                                           {nvml::kNvLinkErrRecovery, "recovery"},
                                                           {nvml::kNvLinkErrCrcFlit, "crc_flit"},
                                                           {nvml::kNvLinkErrCrcData, "crc_data"}};
    for (const auto& [id, name] : counters) {
      unsigned long long v = 0;
      if (s.call("nvmlDeviceGetNvLinkErrorCounter", s.api.DeviceGetNvLinkErrorCounter, h, link, id, &v) == 0)
        c[name] = v;
    }
    return c;
  }
};

// Stage 2: one GPU, everything NVML says about it.
json stage_device(const std::string& library, unsigned index, milliseconds interval, char* slot) {
  die_with_parent();
  auto api = nvml::load_api(library);
  if (!api) return {{"status", "unavailable"}, {"reason", api.error().message}};
  Session s{std::move(*api), slot};
  std::string init_call;
  if (const nvml::Return rc = s.init(&init_call); rc != nvml::SUCCESS)
    return {{"status", "error"}, {"reason", init_call + ": " + s.api.error_string(rc)}};

  json d{{"index", index}, {"lost", false}, {"reset_required", false}};
  json errors = json::object();
  // Records a call's failure; GPU_IS_LOST / RESET_REQUIRED from any call mark the device.
  auto check = [&](const char* call, nvml::Return r) {
    if (r == nvml::SUCCESS || is_absent(r)) return r == nvml::SUCCESS;
    if (r == nvml::ERROR_GPU_IS_LOST) d["lost"] = true;
    if (r == nvml::ERROR_RESET_REQUIRED) d["reset_required"] = true;
    if (!errors.contains(call)) errors[call] = nvml::return_name(r);
    return false;
  };

  nvml::Device h = nullptr;
  if (!check("nvmlDeviceGetHandleByIndex_v2",
             s.call("nvmlDeviceGetHandleByIndex_v2", s.api.DeviceGetHandleByIndex_v2, index, &h))) {
    d["errors"] = errors;
    return {{"status", "ok"}, {"device", d}, {"links", json::array()}};
  }
  nvml::PciInfo pci{};
  if (check("nvmlDeviceGetPciInfo_v3", s.call("nvmlDeviceGetPciInfo_v3", s.api.DeviceGetPciInfo_v3, h, &pci))) {
    d["bdf"] = bdf_of(pci);
    d["pci_device_id"] = fmt::format("0x{:08x}", pci.pciDeviceId);
  }
  char u[nvml::kUuidLen] = {};
  if (check("nvmlDeviceGetUUID", s.call("nvmlDeviceGetUUID", s.api.DeviceGetUUID, h, u, nvml::kUuidLen)))
    d["uuid"] = std::string(u, ::strnlen(u, sizeof u));
  char n[nvml::kNameLen] = {};
  if (check("nvmlDeviceGetName", s.call("nvmlDeviceGetName", s.api.DeviceGetName, h, n, nvml::kNameLen)))
    d["name"] = std::string(n, ::strnlen(n, sizeof n));
  unsigned minor = 0;
  if (check("nvmlDeviceGetMinorNumber", s.call("nvmlDeviceGetMinorNumber", s.api.DeviceGetMinorNumber, h, &minor)))
    d["minor"] = minor;
  unsigned temp = 0;
  if (check("nvmlDeviceGetTemperature",
            s.call("nvmlDeviceGetTemperature", s.api.DeviceGetTemperature, h, nvml::kTempGpu, &temp)))
    d["temperature_c"] = temp;

  unsigned long long reasons = 0;
  nvml::Return rr = s.call("nvmlDeviceGetCurrentClocksEventReasons", s.api.DeviceGetCurrentClocksEventReasons, h, &reasons);
  if (rr == nvml::ERROR_FUNCTION_NOT_FOUND)  // drivers before 12.2 only have the old name
    rr = s.call("nvmlDeviceGetCurrentClocksThrottleReasons", s.api.DeviceGetCurrentClocksThrottleReasons, h, &reasons);
  if (check("nvmlDeviceGetCurrentClocksEventReasons", rr)) {
    d["clocks_event_reasons"] = reasons;
    d["clocks_event_names"] = gpu::clocks_event_names(reasons);
  }

  json ecc = json::object();
  int cur = 0, pending = 0;
  if (check("nvmlDeviceGetEccMode", s.call("nvmlDeviceGetEccMode", s.api.DeviceGetEccMode, h, &cur, &pending)))
    ecc["enabled"] = cur == 1;
  static const std::tuple<int, int, const char*> ecc_counters[] = {
      {nvml::kMemErrUncorrected, nvml::kEccVolatile, "volatile_uncorrected"},
      {nvml::kMemErrCorrected, nvml::kEccVolatile, "volatile_corrected"},
      {nvml::kMemErrUncorrected, nvml::kEccAggregate, "aggregate_uncorrected"},
      {nvml::kMemErrCorrected, nvml::kEccAggregate, "aggregate_corrected"}};
  for (const auto& [type, counter, name] : ecc_counters) {
    unsigned long long v = 0;
    if (check("nvmlDeviceGetTotalEccErrors",
              s.call("nvmlDeviceGetTotalEccErrors", s.api.DeviceGetTotalEccErrors, h, type, counter, &v)))
      ecc[name] = v;
  }
  d["ecc"] = ecc;

  unsigned corr = 0, unc = 0, rpend = 0, rfail = 0;
  if (check("nvmlDeviceGetRemappedRows",
            s.call("nvmlDeviceGetRemappedRows", s.api.DeviceGetRemappedRows, h, &corr, &unc, &rpend, &rfail)))
    d["remapped_rows"] = {{"correctable", corr}, {"uncorrectable", unc}, {"pending", rpend != 0}, {"failure", rfail != 0}};

  json retired = json::object();
  for (const auto& [cause, name] : {std::pair{nvml::kRetireMultipleSbe, "single_bit"}, std::pair{nvml::kRetireDbe, "double_bit"}}) {
    unsigned cnt = 0;
    const nvml::Return r = s.call("nvmlDeviceGetRetiredPages", s.api.DeviceGetRetiredPages, h, cause, &cnt,
                                  static_cast<unsigned long long*>(nullptr));
    // With a zero-size buffer NVML answers the count: SUCCESS when none, INSUFFICIENT_SIZE otherwise.
    if (r == nvml::SUCCESS || r == nvml::ERROR_INSUFFICIENT_SIZE) retired[name] = cnt;
    else check("nvmlDeviceGetRetiredPages", r);
  }
  int rp = 0;
  if (check("nvmlDeviceGetRetiredPagesPendingStatus",
            s.call("nvmlDeviceGetRetiredPagesPendingStatus", s.api.DeviceGetRetiredPagesPendingStatus, h, &rp)))
    retired["pending"] = rp == 1;
  if (!retired.empty()) d["retired_pages"] = retired;

  // Compute processes: which pid (rank) runs on this GPU.
  auto procs_fn = s.api.DeviceGetComputeRunningProcesses_v3 ? s.api.DeviceGetComputeRunningProcesses_v3
                                                            : s.api.DeviceGetComputeRunningProcesses_v2;
  const char* procs_call = s.api.DeviceGetComputeRunningProcesses_v3 ? "nvmlDeviceGetComputeRunningProcesses_v3"
                                                                     : "nvmlDeviceGetComputeRunningProcesses_v2";
  unsigned pc = 0;
  nvml::Return pr = s.call(procs_call, procs_fn, h, &pc, static_cast<nvml::ProcessInfo*>(nullptr));
  std::vector<nvml::ProcessInfo> infos;
  if (pr == nvml::ERROR_INSUFFICIENT_SIZE) {
    infos.resize(pc + 8);  // processes may start between the two calls
    pc = static_cast<unsigned>(infos.size());
    pr = s.call(procs_call, procs_fn, h, &pc, infos.data());
  }
  if (check(procs_call, pr)) {
    json procs = json::array();
    for (unsigned i = 0; i < pc && i < infos.size(); ++i) {
      json p{{"pid", infos[i].pid}};
      if (infos[i].usedGpuMemory != ~0ULL) p["used_memory_bytes"] = infos[i].usedGpuMemory;
      procs.push_back(std::move(p));
    }
    d["processes"] = std::move(procs);
  }

  // Fabric (NVSwitch systems): the versioned call first, then v1.
  nvml::GpuFabricInfoV3 fv{};
  fv.version = nvml::kGpuFabricInfoV3Version;
  nvml::Return fr = s.call("nvmlDeviceGetGpuFabricInfoV", s.api.DeviceGetGpuFabricInfoV, h, &fv);
  if (fr == nvml::SUCCESS) {
    d["fabric"] = {{"state", fv.state},           {"state_name", gpu::fabric_state_name(fv.state)},
                   {"status", fv.status},         {"status_name", nvml::return_name(fv.status)},
                   {"clique_id", fv.cliqueId},    {"health_mask", fv.healthMask},
                   {"health_summary", fv.healthSummary},
                   {"health_summary_name", gpu::fabric_health_summary_name(fv.healthSummary)}};
  } else if (is_absent(fr) || fr == 25 /* ARGUMENT_VERSION_MISMATCH: driver knows only v2 */) {
    nvml::GpuFabricInfo f1{};
    fr = s.call("nvmlDeviceGetGpuFabricInfo", s.api.DeviceGetGpuFabricInfo, h, &f1);
    if (check("nvmlDeviceGetGpuFabricInfo", fr))
      d["fabric"] = {{"state", f1.state}, {"state_name", gpu::fabric_state_name(f1.state)},
                     {"status", f1.status}, {"status_name", nvml::return_name(f1.status)},
                     {"clique_id", f1.cliqueId}};
  } else {
    check("nvmlDeviceGetGpuFabricInfoV", fr);
  }

  nvml::FieldValue fvals[1]{};
  fvals[0].fieldId = nvml::kFieldGpuRecoveryAction;
  if (check("nvmlDeviceGetFieldValues", s.call("nvmlDeviceGetFieldValues", s.api.DeviceGetFieldValues, h, 1, fvals)) &&
      fvals[0].nvmlReturn == nvml::SUCCESS) {
    const int action = fvals[0].valueType == 1 ? static_cast<int>(fvals[0].value.uiVal) : static_cast<int>(fvals[0].value.ullVal);
    d["recovery_action"] = gpu::recovery_action_name(action);
  }

  unsigned gen = 0, width = 0;
  if (check("nvmlDeviceGetCurrPcieLinkGeneration",
            s.call("nvmlDeviceGetCurrPcieLinkGeneration", s.api.DeviceGetCurrPcieLinkGeneration, h, &gen)))
    d["pcie_gen"] = gen;
  if (check("nvmlDeviceGetCurrPcieLinkWidth", s.call("nvmlDeviceGetCurrPcieLinkWidth", s.api.DeviceGetCurrPcieLinkWidth, h, &width)))
    d["pcie_width"] = width;

  // NVLinks: only links NVML answers for exist on this chip (18 on H100/H200).
  json links = json::array();
  LinkCounters lc;
  std::vector<unsigned> ids;
  for (unsigned l = 0; l < nvml::kMaxLinks; ++l) {
    int active = 0;
    const nvml::Return r = s.call("nvmlDeviceGetNvLinkState", s.api.DeviceGetNvLinkState, h, l, &active);
    if (r != nvml::SUCCESS) {
      if (r == nvml::ERROR_GPU_IS_LOST || r == nvml::ERROR_RESET_REQUIRED) check("nvmlDeviceGetNvLinkState", r);
      continue;
    }
    json link{{"link", l}, {"active", active == 1}};
    unsigned ver = 0;
    if (s.call("nvmlDeviceGetNvLinkVersion", s.api.DeviceGetNvLinkVersion, h, l, &ver) == 0) link["version"] = ver;
    if (active == 1) {
      nvml::PciInfo rp_info{};
      if (s.call("nvmlDeviceGetNvLinkRemotePciInfo_v2", s.api.DeviceGetNvLinkRemotePciInfo_v2, h, l, &rp_info) == 0)
        link["remote_bdf"] = bdf_of(rp_info);
      int type = 0;
      if (s.call("nvmlDeviceGetNvLinkRemoteDeviceType", s.api.DeviceGetNvLinkRemoteDeviceType, h, l, &type) == 0)
        link["remote_type"] = gpu::nvlink_remote_type_name(type);
    }
    link["counters_t0"] = lc.read(s, h, l);
    links.push_back(std::move(link));
    ids.push_back(l);
  }
  if (!links.empty() && interval.count() > 0) {
    // Counters are read twice: a historic count says little, a rising one is a live fault.
    std::this_thread::sleep_for(interval);
    for (size_t i = 0; i < links.size(); ++i) {
      links[i]["counters_t1"] = lc.read(s, h, ids[i]);
      links[i]["interval_ms"] = interval.count();
    }
  }
  d["errors"] = errors;
  s.call("nvmlShutdown", s.api.Shutdown);
  return {{"status", "ok"}, {"device", d}, {"links", links}};
}

// Stage 3: the P2P status matrix and the PCIe topology between every pair.
json stage_p2p(const std::string& library, unsigned count, char* slot) {
  die_with_parent();
  auto api = nvml::load_api(library);
  if (!api) return {{"status", "unavailable"}, {"reason", api.error().message}};
  Session s{std::move(*api), slot};
  std::string init_call;
  if (const nvml::Return rc = s.init(&init_call); rc != nvml::SUCCESS)
    return {{"status", "error"}, {"reason", init_call + ": " + s.api.error_string(rc)}};
  std::vector<nvml::Device> h(count, nullptr);
  json gpus = json::array();
  for (unsigned i = 0; i < count; ++i) {
    nvml::PciInfo pci{};
    if (s.call("nvmlDeviceGetHandleByIndex_v2", s.api.DeviceGetHandleByIndex_v2, i, &h[i]) != 0) h[i] = nullptr;
    if (h[i] && s.call("nvmlDeviceGetPciInfo_v3", s.api.DeviceGetPciInfo_v3, h[i], &pci) == 0) gpus.push_back(bdf_of(pci));
    else gpus.push_back(nullptr);
  }
  json out{{"status", "ok"}, {"gpus", gpus}};
  static const std::pair<int, const char*> caps[] = {
      {nvml::kP2PRead, "read"}, {nvml::kP2PWrite, "write"}, {nvml::kP2PNvlink, "nvlink"}, {nvml::kP2PAtomics, "atomics"}};
  for (const auto& [cap, name] : caps) {
    json m = json::array();
    for (unsigned i = 0; i < count; ++i) {
      json row = json::array();
      for (unsigned j = 0; j < count; ++j) {
        int st = 0;
        if (i != j && h[i] && h[j] && s.call("nvmlDeviceGetP2PStatus", s.api.DeviceGetP2PStatus, h[i], h[j], cap, &st) == 0)
          row.push_back(st);
        else
          row.push_back(nullptr);
      }
      m.push_back(std::move(row));
    }
    out[name] = std::move(m);
  }
  json topo = json::array();
  for (unsigned i = 0; i < count; ++i) {
    json row = json::array();
    for (unsigned j = 0; j < count; ++j) {
      int level = 0;
      if (i != j && h[i] && h[j] &&
          s.call("nvmlDeviceGetTopologyCommonAncestor", s.api.DeviceGetTopologyCommonAncestor, h[i], h[j], &level) == 0)
        row.push_back(gpu::topology_level_name(level));
      else
        row.push_back(nullptr);
    }
    topo.push_back(std::move(row));
  }
  out["topology"] = std::move(topo);
  s.call("nvmlShutdown", s.api.Shutdown);
  return out;
}

std::string hung_reason(const std::string& call, milliseconds deadline, const std::string& fallback) {
  const std::string what = call.empty() ? fallback : call;
  return fmt::format("{} did not return within {} ms", what, deadline.count());
}

Availability from_status(const json& j) {
  const std::string st = j.is_object() ? j.value("status", "error") : "error";
  const std::string reason = j.is_object() ? j.value("reason", "") : "";
  if (st == "ok") return Availability::ok();
  if (st == "unavailable") return Availability::unavailable(reason);
  return Availability::error(reason.empty() ? "bad probe result" : reason);
}

}  // namespace

NvmlProbeResult probe_nvml(const NvmlProbeOptions& opts) {
  NvmlProbeResult res;
  Deadline deadline(opts.total);

  Evidence nv;
  nv.kind = "gpu.nvml";
  nv.subject.host = opts.host;
  nv.provenance.source = "dlopen " + opts.library;

  // Stage 1.
  std::vector<json> devices;
  {
    CallTrace trace(1);
    const milliseconds dl = std::min(opts.init_deadline, opts.total);  // the first stage: nothing spent yet
    const auto o = run_probe_isolated("nvml enumerate", dl, [&] { return stage_enumerate(opts.library, trace.slot(0)); });
    if (o.availability.state == AvailabilityState::timeout) {
      nv.availability = Availability::timeout(hung_reason(trace.read(0), dl, "NVML"));
      nv.provenance.source = trace.read(0).empty() ? nv.provenance.source : trace.read(0);
    } else if (!o.availability.is_ok()) {
      nv.availability = o.availability;
    } else {
      nv.availability = from_status(o.value);
      for (const char* k : {"library", "library_dir", "init_call", "init_return", "driver_version", "cuda_driver_version",
                            "device_count", "devices", "detail"})
        if (o.value.contains(k)) nv.data[k] = o.value[k];
      if (o.value.contains("init_call")) nv.provenance.source = o.value["init_call"].get<std::string>();
      if (o.value.contains("devices"))
        for (const auto& d : o.value["devices"]) devices.push_back(d);
    }
    nv.provenance.excerpt = nv.availability.is_ok() ? "" : nv.availability.reason;
    nv.data["elapsed_ms"] = o.elapsed.count();
  }
  if (!nv.availability.is_ok()) {
    // No NVML library means no NVIDIA GPU to check here: skipped, not missed.
    const UncheckedState st = nv.availability.state == AvailabilityState::unavailable
                                  ? UncheckedState::skipped
                                  : unchecked_state_of(nv.availability.state);
    res.unchecked.push_back(Unchecked{"NVML", st, nv.availability.reason});
    res.evidence.push_back(std::move(nv));
    return res;
  }
  res.evidence.push_back(std::move(nv));
  if (devices.empty()) return res;

  // Stage 2: every GPU at once, each in its own child.
  {
    CallTrace trace(devices.size());
    const milliseconds interval =
        std::min(opts.sample_interval, milliseconds(std::max<int64_t>(0, deadline.remaining().count() / 3)));
    const milliseconds dl = deadline.slice(opts.device_deadline + interval);
    std::vector<ProbeSpec> specs;
    for (size_t i = 0; i < devices.size(); ++i) {
      const unsigned index = devices[i].value("index", static_cast<unsigned>(i));
      char* slot = trace.slot(i);
      specs.push_back(ProbeSpec{"nvml gpu " + std::to_string(index), dl,
                                [&opts, index, interval, slot] { return stage_device(opts.library, index, interval, slot); }});
    }
    const auto outcomes = run_probes_isolated(specs);
    for (size_t i = 0; i < devices.size(); ++i) {
      const json& known = devices[i];
      Evidence e;
      e.kind = "gpu.device";
      e.subject.host = opts.host;
      if (known.contains("bdf")) e.subject.gpu = known["bdf"].get<std::string>();
      e.provenance.source = "nvml gpu " + std::to_string(known.value("index", 0u));
      const auto& o = outcomes[i];
      if (o.availability.state == AvailabilityState::timeout) {
        const std::string call = trace.read(i);
        e.availability = Availability::timeout(hung_reason(call, dl, "NVML"));
        e.data = known;
        if (!call.empty()) e.data["hung_call"] = call;
        res.unchecked.push_back(Unchecked{"NVML GPU " + std::to_string(known.value("index", 0u)), UncheckedState::timeout, e.availability.reason});
        res.evidence.push_back(std::move(e));
        continue;
      }
      if (!o.availability.is_ok() || o.value.value("status", "") != "ok") {
        e.availability = o.availability.is_ok() ? from_status(o.value) : o.availability;
        e.data = known;
        res.unchecked.push_back(Unchecked{"NVML GPU " + std::to_string(known.value("index", 0u)),
                                          unchecked_state_of(e.availability.state), e.availability.reason});
        res.evidence.push_back(std::move(e));
        continue;
      }
      e.data = o.value["device"];
      if (e.data.contains("bdf")) e.subject.gpu = e.data["bdf"].get<std::string>();
      for (const auto& pid_entry : e.data.value("processes", json::array()))
        if (pid_entry.contains("pid") && !e.subject.pid) e.subject.pid = pid_entry["pid"].get<int64_t>();
      const std::string gpu_key = e.subject.gpu.value_or(std::to_string(known.value("index", 0u)));
      for (const auto& l : o.value["links"]) {
        Evidence le;
        le.kind = "nvlink.link";
        le.subject.host = opts.host;
        le.subject.gpu = gpu_key;
        le.provenance.source = "nvmlDeviceGetNvLinkState";
        le.provenance.excerpt = fmt::format("gpu {} link {}", gpu_key, l.value("link", 0u));
        le.data = l;
        le.data["gpu_index"] = known.value("index", 0u);
        res.evidence.push_back(std::move(le));
      }
      res.evidence.push_back(std::move(e));
    }
  }

  // Stage 3.
  if (opts.p2p_matrix && devices.size() >= 2 && !deadline.expired()) {
    CallTrace trace(1);
    const milliseconds dl = deadline.slice(opts.init_deadline);
    const unsigned count = static_cast<unsigned>(devices.size());
    const auto o = run_probe_isolated("nvml p2p", dl, [&] { return stage_p2p(opts.library, count, trace.slot(0)); });
    Evidence e;
    e.kind = "gpu.p2p";
    e.subject.host = opts.host;
    e.provenance.source = "nvmlDeviceGetP2PStatus";
    if (o.availability.state == AvailabilityState::timeout) {
      e.availability = Availability::timeout(hung_reason(trace.read(0), dl, "NVML"));
    } else if (!o.availability.is_ok()) {
      e.availability = o.availability;
    } else {
      e.availability = from_status(o.value);
      e.data = o.value;
      e.data.erase("status");
    }
    e.data["source"] = "nvml";
    if (!e.availability.is_ok())
      res.unchecked.push_back(Unchecked{"NVML P2P matrix", unchecked_state_of(e.availability.state), e.availability.reason});
    res.evidence.push_back(std::move(e));
  }
  return res;
}

}  // namespace ccdiag
