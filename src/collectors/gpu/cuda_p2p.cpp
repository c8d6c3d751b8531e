#include "collectors/gpu/cuda_p2p.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "collectors/gpu/gpu_names.hpp"
#include "sys/dl.hpp"
#include "sys/probe_runner.hpp"

namespace ccdiag {

namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// The driver API entry points used (cuda.h, stable C ABI; _v2 names are the
// ones the 64-bit API exports since CUDA 3.2 / 11.0).
struct CudaApi {
  DynLib lib;
  using CUresult = int;
  using CUdevice = int;
  using CUcontext = void*;
  using CUdeviceptr = unsigned long long;
  using CUevent = void*;
  using CUstream = void*;
  CUresult (*Init)(unsigned) = nullptr;
  CUresult (*GetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*DriverGetVersion)(int*) = nullptr;
  CUresult (*DeviceGetCount)(int*) = nullptr;
  CUresult (*DeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*DeviceGetPCIBusId)(char*, int, CUdevice) = nullptr;
  CUresult (*DeviceCanAccessPeer)(int*, CUdevice, CUdevice) = nullptr;
  CUresult (*PrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*PrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*CtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*CtxEnablePeerAccess)(CUcontext, unsigned) = nullptr;
  CUresult (*CtxSynchronize)() = nullptr;
  CUresult (*MemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*MemFree)(CUdeviceptr) = nullptr;
  CUresult (*MemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream) = nullptr;
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;
  CUresult (*EventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*EventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*EventSynchronize)(CUevent) = nullptr;
  CUresult (*EventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  CUresult (*EventDestroy)(CUevent) = nullptr;

  std::string error(CUresult r) const {
    const char* s = nullptr;
    if (GetErrorString) GetErrorString(r, &s);
    return fmt::format("CUDA error {}{}", r, s ? std::string(" (") + s + ")" : "");
  }
};

constexpr int kPeerAccessAlreadyEnabled = 704;
constexpr size_t kSlot = 160;

Result<CudaApi> load_cuda(const std::string& library) {
  auto lib = DynLib::open(library);
  if (!lib) return lib.error();
  CudaApi a;
  a.lib = std::move(*lib);
#define CCDIAG_CU_SYM(field, name) a.field = a.lib.function<decltype(a.field)>(name)
  CCDIAG_CU_SYM(Init, "cuInit");
  CCDIAG_CU_SYM(GetErrorString, "cuGetErrorString");
  CCDIAG_CU_SYM(DriverGetVersion, "cuDriverGetVersion");
  CCDIAG_CU_SYM(DeviceGetCount, "cuDeviceGetCount");
  CCDIAG_CU_SYM(DeviceGet, "cuDeviceGet");
  CCDIAG_CU_SYM(DeviceGetPCIBusId, "cuDeviceGetPCIBusId");
  CCDIAG_CU_SYM(DeviceCanAccessPeer, "cuDeviceCanAccessPeer");
  CCDIAG_CU_SYM(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  CCDIAG_CU_SYM(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  CCDIAG_CU_SYM(CtxSetCurrent, "cuCtxSetCurrent");
  CCDIAG_CU_SYM(CtxEnablePeerAccess, "cuCtxEnablePeerAccess");
  CCDIAG_CU_SYM(CtxSynchronize, "cuCtxSynchronize");
  CCDIAG_CU_SYM(MemAlloc, "cuMemAlloc_v2");
  CCDIAG_CU_SYM(MemFree, "cuMemFree_v2");
  CCDIAG_CU_SYM(MemcpyPeerAsync, "cuMemcpyPeerAsync");
  CCDIAG_CU_SYM(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  CCDIAG_CU_SYM(EventCreate, "cuEventCreate");
  CCDIAG_CU_SYM(EventRecord, "cuEventRecord");
  CCDIAG_CU_SYM(EventSynchronize, "cuEventSynchronize");
  CCDIAG_CU_SYM(EventElapsedTime, "cuEventElapsedTime");
  CCDIAG_CU_SYM(EventDestroy, "cuEventDestroy_v2");
#undef CCDIAG_CU_SYM
  if (!a.Init || !a.DeviceGetCount || !a.DeviceGet || !a.DeviceGetPCIBusId || !a.DeviceCanAccessPeer ||
      !a.PrimaryCtxRetain || !a.CtxSetCurrent || !a.CtxSynchronize || !a.MemAlloc || !a.MemFree ||
      !a.MemcpyPeerAsync || !a.MemcpyDtoDAsync || !a.EventCreate || !a.EventRecord || !a.EventSynchronize ||
      !a.EventElapsedTime || !a.EventDestroy)
    return make_error("lacks a driver API entry point ccdiag needs", library, "driver too old or not libcuda");
  return a;
}

void mark(char* slot, const std::string& what) {
  if (slot) std::snprintf(slot, kSlot, "%s", what.c_str());
}

json stage_matrix(const std::string& library, char* slot) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  mark(slot, "dlopen " + library);
  auto api = load_cuda(library);
  if (!api) return {{"status", "unavailable"}, {"reason", api.error().message}, {"detail", api.error().hint}};
  mark(slot, "cuInit");
  if (int r = api->Init(0); r != 0) return {{"status", "error"}, {"reason", "cuInit: " + api->error(r)}};
  json out{{"status", "ok"}};
  int ver = 0;
  if (api->DriverGetVersion && api->DriverGetVersion(&ver) == 0) out["cuda_driver_version"] = ver;
  int n = 0;
  mark(slot, "cuDeviceGetCount");
  if (int r = api->DeviceGetCount(&n); r != 0) return {{"status", "error"}, {"reason", "cuDeviceGetCount: " + api->error(r)}};
  json gpus = json::array();
  for (int i = 0; i < n; ++i) {
    int dev = 0;
    char bus[32] = {};
    if (api->DeviceGet(&dev, i) == 0 && api->DeviceGetPCIBusId(bus, sizeof bus, dev) == 0)
      gpus.push_back(gpu::normalize_bdf(bus).value_or(bus));
    else
      gpus.push_back(nullptr);
  }
  json can = json::array();
  for (int i = 0; i < n; ++i) {
    json row = json::array();
    for (int j = 0; j < n; ++j) {
      int c = 0;
      mark(slot, fmt::format("cuDeviceCanAccessPeer {} {}", i, j));
      if (i != j && api->DeviceCanAccessPeer(&c, i, j) == 0) row.push_back(c != 0);
      else row.push_back(nullptr);
    }
    can.push_back(std::move(row));
  }
  out["gpus"] = std::move(gpus);
  out["can_access_peer"] = std::move(can);
  mark(slot, "");
  return out;
}

// One pair (or one GPU when a == b): copies both ways, timed with CUDA events.
json stage_pair(const std::string& library, int a, int b, size_t bytes, int iterations, const std::string& label_a,
                const std::string& label_b, char* slot) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  auto api = load_cuda(library);
  if (!api) return {{"status", "error"}, {"reason", api.error().message}};
  mark(slot, "cuInit");
  if (int r = api->Init(0); r != 0) return {{"status", "error"}, {"reason", "cuInit: " + api->error(r)}};
  CudaApi::CUcontext ca = nullptr, cb = nullptr;
  mark(slot, "cuDevicePrimaryCtxRetain");
  if (int r = api->PrimaryCtxRetain(&ca, a); r != 0) return {{"status", "error"}, {"reason", "cuDevicePrimaryCtxRetain: " + api->error(r)}};
  if (int r = api->PrimaryCtxRetain(&cb, b); r != 0) return {{"status", "error"}, {"reason", "cuDevicePrimaryCtxRetain: " + api->error(r)}};
  CudaApi::CUdeviceptr pa = 0, pb = 0;
  api->CtxSetCurrent(ca);
  mark(slot, "cuMemAlloc_v2");
  if (int r = api->MemAlloc(&pa, bytes); r != 0) return {{"status", "error"}, {"reason", "cuMemAlloc_v2: " + api->error(r)}};
  if (a != b) {
    if (int r = api->CtxEnablePeerAccess(cb, 0); r != 0 && r != kPeerAccessAlreadyEnabled)
      return {{"status", "error"}, {"reason", "cuCtxEnablePeerAccess: " + api->error(r)}};
    api->CtxSetCurrent(cb);
    if (int r = api->MemAlloc(&pb, bytes); r != 0) return {{"status", "error"}, {"reason", "cuMemAlloc_v2: " + api->error(r)}};
    if (int r = api->CtxEnablePeerAccess(ca, 0); r != 0 && r != kPeerAccessAlreadyEnabled)
      return {{"status", "error"}, {"reason", "cuCtxEnablePeerAccess: " + api->error(r)}};
  } else {
    if (int r = api->MemAlloc(&pb, bytes); r != 0) return {{"status", "error"}, {"reason", "cuMemAlloc_v2: " + api->error(r)}};
  }

  // Copies go to the current context's legacy stream (0) and are timed with
  // CUDA events around them: device time, not host scheduling noise (the
  // method of CUDA's p2pBandwidthLatencyTest).
  auto copy = [&](bool forward, size_t n) {
    if (a == b) return api->MemcpyDtoDAsync(pb, pa, n, nullptr);
    return forward ? api->MemcpyPeerAsync(pb, cb, pa, ca, n, nullptr) : api->MemcpyPeerAsync(pa, ca, pb, cb, n, nullptr);
  };
  // Milliseconds for `count` copies of `n` bytes, or an error text.
  auto timed = [&](bool forward, size_t n, int count, const std::string& dir, double* ms) -> std::string {
    CudaApi::CUevent start = nullptr, stop = nullptr;
    if (int r = api->EventCreate(&start, 0); r != 0) return "cuEventCreate: " + api->error(r);
    if (int r = api->EventCreate(&stop, 0); r != 0) return "cuEventCreate: " + api->error(r);
    api->EventRecord(start, nullptr);
    for (int i = 0; i < count; ++i)
      if (int r = copy(forward, n); r != 0) return "copy " + dir + ": " + api->error(r);
    api->EventRecord(stop, nullptr);
    mark(slot, (a == b ? "cuMemcpyDtoDAsync " : "cuMemcpyPeerAsync ") + dir);
    if (int r = api->EventSynchronize(stop); r != 0) return "copy " + dir + ": " + api->error(r);
    float f = 0;
    if (int r = api->EventElapsedTime(&f, start, stop); r != 0) return "cuEventElapsedTime: " + api->error(r);
    api->EventDestroy(start);
    api->EventDestroy(stop);
    *ms = f;
    return {};
  };
  json dirs = json::array();
  for (bool forward : {true, false}) {
    if (a == b && !forward) break;
    const std::string dir = forward ? label_a + " -> " + label_b : label_b + " -> " + label_a;
    api->CtxSetCurrent(forward ? ca : cb);
    double warm = 0, ms = 0, small = 0;
    constexpr int kSmall = 20;
    std::string err = timed(forward, bytes, 1, dir, &warm);
    if (err.empty()) err = timed(forward, bytes, iterations, dir, &ms);
    if (err.empty()) err = timed(forward, 8, kSmall, dir, &small);
    if (!err.empty()) return {{"status", "error"}, {"reason", err}};
    const double gbps = ms > 0 ? static_cast<double>(bytes) * iterations / (ms / 1e3) / 1e9 : 0.0;
    const double lat_us = small * 1e3 / kSmall;
    dirs.push_back({{"direction", forward ? "forward" : "reverse"},
                    {"bandwidth_gbps", std::round(gbps * 10) / 10},
                    {"latency_us", std::round(lat_us * 100) / 100}});
  }
  mark(slot, "cuMemFree_v2");
  api->CtxSetCurrent(ca);
  api->MemFree(pa);
  api->CtxSetCurrent(a == b ? ca : cb);
  api->MemFree(pb);
  if (api->PrimaryCtxRelease) {
    api->PrimaryCtxRelease(a);
    if (a != b) api->PrimaryCtxRelease(b);
  }
  mark(slot, "");
  return {{"status", "ok"}, {"directions", dirs}};
}

}  // namespace

P2pTestResult run_p2p_test(const P2pTestOptions& opts) {
  P2pTestResult res;
  Evidence& e = res.evidence;
  e.kind = "gpu.p2p";
  e.subject.host = opts.host;
  e.provenance.source = "dlopen " + opts.library;
  e.data["source"] = "cuda";
  Deadline deadline(opts.total);

  void* mem = ::mmap(nullptr, kSlot, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  char* slot = mem == MAP_FAILED ? nullptr : static_cast<char*>(mem);
  if (slot) std::memset(slot, 0, kSlot);
  auto slot_text = [&] { return slot ? std::string(slot, ::strnlen(slot, kSlot - 1)) : std::string(); };
  struct Unmap {
    void* p;
    ~Unmap() {
      if (p && p != MAP_FAILED) ::munmap(p, kSlot);
    }
  } unmap{mem};

  const milliseconds init_dl = deadline.slice(opts.init_deadline);
  const auto m = run_probe_isolated("cuda p2p matrix", init_dl, [&] { return stage_matrix(opts.library, slot); });
  if (m.availability.state == AvailabilityState::timeout) {
    e.availability = Availability::timeout(fmt::format("{} did not return within {} ms", slot_text().empty() ? "CUDA" : slot_text(), init_dl.count()));
  } else if (!m.availability.is_ok()) {
    e.availability = m.availability;
  } else if (m.value.value("status", "") != "ok") {
    const std::string reason = m.value.value("reason", "CUDA failed");
    e.availability = m.value.value("status", "") == "unavailable" ? Availability::unavailable(reason) : Availability::error(reason);
  }
  if (!e.availability.is_ok()) {
    const UncheckedState st = e.availability.state == AvailabilityState::unavailable
                                  ? UncheckedState::skipped
                                  : unchecked_state_of(e.availability.state);
    res.unchecked.push_back(Unchecked{"CUDA P2P test", st, e.availability.reason});
    return res;
  }
  e.provenance.source = "cuDeviceCanAccessPeer";
  for (const char* k : {"cuda_driver_version", "gpus", "can_access_peer"})
    if (m.value.contains(k)) e.data[k] = m.value[k];
  const json gpus = m.value.value("gpus", json::array());
  const json can = m.value.value("can_access_peer", json::array());
  const int n = static_cast<int>(gpus.size());
  auto label = [&](int i) { return gpus[i].is_string() ? gpus[i].get<std::string>() : "cuda:" + std::to_string(i); };

  json pairs = json::array();
  std::vector<std::pair<int, int>> todo;
  if (n == 1) todo.emplace_back(0, 0);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) todo.emplace_back(i, j);
  for (const auto& [a, b] : todo) {
    json p{{"a", label(a)}, {"b", label(b)}, {"bytes", opts.bytes}};
    if (a == b) {
      p["expected_path"] = "local";
    } else {
      std::string x = label(a), y = label(b);
      if (y < x) std::swap(x, y);
      auto it = opts.expected_path.find({x, y});
      p["expected_path"] = it == opts.expected_path.end() ? "unknown" : it->second;
      const bool ab = can.size() > static_cast<size_t>(a) && can[a].size() > static_cast<size_t>(b) && can[a][b].is_boolean() && can[a][b].get<bool>();
      const bool ba = can.size() > static_cast<size_t>(b) && can[b].size() > static_cast<size_t>(a) && can[b][a].is_boolean() && can[b][a].get<bool>();
      p["can_access_peer"] = ab && ba;
      if (!(ab && ba)) {
        p["status"] = "not_accessible";
        pairs.push_back(std::move(p));
        continue;
      }
    }
    if (deadline.expired()) {
      p["status"] = "skipped";
      p["reason"] = "the test's total time ran out";
      pairs.push_back(std::move(p));
      continue;
    }
    if (slot) slot[0] = '\0';
    const milliseconds dl = deadline.slice(opts.pair_deadline);
    const auto o = run_probe_isolated("cuda p2p pair", dl, [&, a = a, b = b] {
      return stage_pair(opts.library, a, b, opts.bytes, opts.iterations, label(a), label(b), slot);
    });
    if (o.availability.state == AvailabilityState::timeout) {
      p["status"] = "timeout";
      p["reason"] = fmt::format("{} did not complete within {} ms", slot_text().empty() ? "the pair test" : slot_text(), dl.count());
    } else if (!o.availability.is_ok()) {
      p["status"] = "error";
      p["reason"] = o.availability.reason;
    } else if (o.value.value("status", "") != "ok") {
      p["status"] = "error";
      p["reason"] = o.value.value("reason", "");
    } else {
      p["status"] = "ok";
      p["directions"] = o.value["directions"];
      double worst = -1;
      for (const auto& d : o.value["directions"]) {
        const double bw = d.value("bandwidth_gbps", 0.0);
        if (worst < 0 || bw < worst) worst = bw;
      }
      p["bandwidth_gbps"] = worst;  // the slower direction judges the pair
    }
    p["elapsed_ms"] = o.elapsed.count();
    pairs.push_back(std::move(p));
  }
  e.data["pairs"] = std::move(pairs);
  return res;
}

}  // namespace ccdiag
