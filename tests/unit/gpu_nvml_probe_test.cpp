// The NVML probe against the fake libnvidia-ml.so.1 (tests/fake_nvml), loaded
// through the real dlopen path, one scenario per test.
#include <cstdlib>

#include <catch2/catch.hpp>

#include "analysis/tree/catalogue.hpp"
#include "collectors/gpu/gpu_findings.hpp"
#include "collectors/gpu/nvml_probe.hpp"
#include "sys/dl.hpp"

using namespace ccdiag;
using std::chrono::milliseconds;

namespace {

const std::string kFake = std::string(CCDIAG_FAKE_NVML_DIR) + "/libnvidia-ml.so.1";

NvmlProbeResult probe(const char* scenario, milliseconds interval = milliseconds(50)) {
  ::setenv("CCDIAG_FAKE_NVML_SCENARIO", scenario, 1);
  NvmlProbeOptions o;
  o.library = kFake;
  o.host = "hgx-node-17";
  o.init_deadline = milliseconds(1500);
  o.device_deadline = milliseconds(1500);
  o.sample_interval = interval;
  o.total = milliseconds(6000);
  auto r = probe_nvml(o);
  ::unsetenv("CCDIAG_FAKE_NVML_SCENARIO");
  return r;
}

std::vector<const Evidence*> of_kind(const NvmlProbeResult& r, const std::string& kind) {
  std::vector<const Evidence*> v;
  for (const auto& e : r.evidence)
    if (e.kind == kind) v.push_back(&e);
  return v;
}

std::vector<const Finding*> with_id(const std::vector<Finding>& fs, const std::string& id) {
  std::vector<const Finding*> v;
  for (const auto& f : fs)
    if (f.id == id) v.push_back(&f);
  return v;
}

bool problems(const std::vector<Finding>& fs) {
  for (const auto& f : fs)
    if (f.severity >= Severity::warning) return true;
  return false;
}

}  // namespace

TEST_CASE("dl shim: a missing library is an error value naming it, a missing symbol is null") {
  auto none = DynLib::open("libccdiag-no-such-library.so.9");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message == "libccdiag-no-such-library.so.9 not found");
  auto fake = DynLib::open(kFake);
  REQUIRE(fake.ok());
  CHECK(fake->symbol("nvmlInitWithFlags") != nullptr);
  CHECK(fake->symbol("nvmlNoSuchFunction") == nullptr);
  CHECK_FALSE(fake->origin().empty());
}

TEST_CASE("NVML absent: gpu.nvml unavailable and an unchecked entry, no findings") {
  NvmlProbeOptions o;
  o.library = "libnvidia-ml-ccdiag-absent.so.1";
  auto r = probe_nvml(o);
  REQUIRE(r.evidence.size() == 1);
  CHECK(r.evidence[0].kind == "gpu.nvml");
  CHECK(r.evidence[0].availability.state == AvailabilityState::unavailable);
  REQUIRE(r.unchecked.size() == 1);
  CHECK(r.unchecked[0].what == "NVML");
  CHECK(r.unchecked[0].state == UncheckedState::skipped);
  CHECK(r.unchecked[0].reason == "libnvidia-ml-ccdiag-absent.so.1 not found");
  CHECK(gpu_findings(r.evidence).empty());
}

TEST_CASE("healthy HGX H100 node: 8 GPUs, 18 active NVLinks each to NVSwitches, full P2P, no findings") {
  auto r = probe("healthy");
  CHECK(r.unchecked.empty());
  auto nv = of_kind(r, "gpu.nvml");
  REQUIRE(nv.size() == 1);
  CHECK(nv[0]->availability.is_ok());
  CHECK(nv[0]->data["driver_version"] == "550.90.07");
  CHECK(nv[0]->data["cuda_driver_version"] == 12040);
  CHECK(nv[0]->data["device_count"] == 8);
  auto devs = of_kind(r, "gpu.device");
  REQUIRE(devs.size() == 8);
  CHECK(devs[0]->subject.gpu == "0000:18:00.0");
  CHECK(devs[7]->subject.gpu == "0000:db:00.0");
  CHECK(devs[0]->subject.host == "hgx-node-17");
  CHECK(devs[0]->data["uuid"] == "GPU-5f0a1c2e-7d3b-4a8e-9c61-0b2d4e6f8a00");
  CHECK(devs[0]->data["name"] == "NVIDIA H100 80GB HBM3");
  CHECK(devs[0]->data["fabric"]["state_name"] == "completed");
  CHECK(devs[0]->data["ecc"]["volatile_uncorrected"] == 0);
  CHECK(devs[0]->data["recovery_action"] == "none");
  CHECK(devs[0]->data["processes"].empty());
  CHECK_FALSE(devs[0]->data.contains("retired_pages"));  // H100: NOT_SUPPORTED, not an error
  CHECK(devs[0]->data["errors"].empty());
  auto links = of_kind(r, "nvlink.link");
  REQUIRE(links.size() == 8 * 18);
  CHECK(links[0]->data["active"] == true);
  CHECK(links[0]->data["remote_type"] == "switch");
  CHECK(links[0]->data["remote_bdf"] == "0000:05:00.0");
  CHECK(links[17]->data["remote_bdf"] == "0000:08:00.0");
  CHECK(links[0]->data["counters_t1"]["replay"] == 0);
  auto p2p = of_kind(r, "gpu.p2p");
  REQUIRE(p2p.size() == 1);
  CHECK(p2p[0]->data["source"] == "nvml");
  CHECK(p2p[0]->data["nvlink"][0][1] == 0);
  CHECK(p2p[0]->data["nvlink"][0][0].is_null());
  CHECK(p2p[0]->data["topology"][0][1] == "PXB");
  CHECK(p2p[0]->data["topology"][0][7] == "SYS");
  CHECK_FALSE(problems(gpu_findings(r.evidence)));
}

TEST_CASE("one NVLink down: GPU 1 has 16 of 18 links, a nvlink_down_or_degraded finding on it") {
  auto r = probe("nvlink_down");
  auto fs = gpu_findings(r.evidence);
  auto down = with_id(fs, "nvlink.down");
  REQUIRE(down.size() == 1);
  CHECK(down[0]->subject.gpu == "0000:2a:00.0");
  CHECK(down[0]->severity == Severity::error);
  CHECK(down[0]->fields["inactive_links"] == nlohmann::json::array({4, 5}));
  CHECK(down[0]->fields["expected_active_links"] == 18);
  REQUIRE(down[0]->supports.size() == 1);
  CHECK(down[0]->supports[0].cause == "nvlink_down_or_degraded");
}

TEST_CASE("replay errors rising between the two samples on GPU 4 link 7") {
  auto r = probe("replay_rising");
  const Evidence* link7 = nullptr;
  for (const auto* e : of_kind(r, "nvlink.link"))
    if (e->subject.gpu == "0000:9a:00.0" && e->data["link"] == 7) link7 = e;
  REQUIRE(link7);
  CHECK(link7->data["counters_t0"]["replay"] == 12);
  CHECK(link7->data["counters_t1"]["replay"] == 49);
  auto fs = gpu_findings(r.evidence);
  auto rising = with_id(fs, "nvlink.errors_rising");
  REQUIRE(rising.size() == 1);
  CHECK(rising[0]->subject.gpu == "0000:9a:00.0");
  CHECK(rising[0]->summary.find("link 7 (+37 replay, +1 recovery") != std::string::npos);
  CHECK(rising[0]->supports[0].cause == "nvlink_down_or_degraded");
}

TEST_CASE("historic NVLink counters with one sample only are not a live fault") {
  auto r = probe("replay_rising", milliseconds(0));
  CHECK(with_id(gpu_findings(r.evidence), "nvlink.errors_rising").empty());
}

TEST_CASE("nvmlInit that never returns ends as a timeout naming the call, within the deadline") {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = probe("init_hang");
  const auto took = std::chrono::steady_clock::now() - t0;
  CHECK(took < std::chrono::milliseconds(2500));
  REQUIRE(r.evidence.size() == 1);
  CHECK(r.evidence[0].availability.state == AvailabilityState::timeout);
  CHECK(r.evidence[0].availability.reason == "nvmlInitWithFlags did not return within 1500 ms");
  REQUIRE(r.unchecked.size() == 1);
  CHECK(r.unchecked[0].state == UncheckedState::timeout);
  CHECK(r.unchecked[0].reason == "nvmlInitWithFlags did not return within 1500 ms");
  auto fs = gpu_findings(r.evidence);
  REQUIRE(with_id(fs, "gpu.nvml.unresponsive").size() == 1);
}

TEST_CASE("a GPU whose NVML queries block costs only its own data") {
  auto r = probe("device_hang");
  auto devs = of_kind(r, "gpu.device");
  REQUIRE(devs.size() == 8);
  int timeouts = 0;
  for (const auto* d : devs) {
    if (d->availability.state != AvailabilityState::timeout) continue;
    ++timeouts;
    CHECK(d->subject.gpu == "0000:ba:00.0");
    CHECK(d->data["hung_call"] == "nvmlDeviceGetNvLinkErrorCounter");
  }
  CHECK(timeouts == 1);
  CHECK(of_kind(r, "nvlink.link").size() == 7 * 18);
  REQUIRE(r.unchecked.size() == 1);
  CHECK(r.unchecked[0].what == "NVML GPU 6");
  auto fs = gpu_findings(r.evidence);
  auto f = with_id(fs, "gpu.nvml.device_unresponsive");
  REQUIRE(f.size() == 1);
  CHECK(f[0]->subject.gpu == "0000:ba:00.0");
}

TEST_CASE("GPU lost: NVML_ERROR_GPU_IS_LOST on GPU 3 supports gpu_fell_off_bus") {
  auto r = probe("gpu_lost");
  auto fs = gpu_findings(r.evidence);
  auto lost = with_id(fs, "gpu.lost");
  REQUIRE(lost.size() == 1);
  CHECK(lost[0]->subject.gpu == "0000:5d:00.0");
  CHECK(lost[0]->severity == Severity::critical);
  CHECK(lost[0]->supports[0].cause == "gpu_fell_off_bus");
  CHECK(lost[0]->fields["errors"]["nvmlDeviceGetUUID"] == "GPU_IS_LOST");
  // The lost GPU's missing NVLinks are not reported again as "links down".
  CHECK(with_id(fs, "nvlink.down").empty());
}

TEST_CASE("ECC errors on GPU 2: uncorrectable errors and a pending row remap") {
  auto r = probe("ecc_errors");
  auto fs = gpu_findings(r.evidence);
  auto unc = with_id(fs, "gpu.ecc.uncorrectable");
  REQUIRE(unc.size() == 1);
  CHECK(unc[0]->subject.gpu == "0000:3a:00.0");
  CHECK(unc[0]->fields["volatile_uncorrected"] == 2);
  CHECK(unc[0]->supports[0].cause == "gpu_ecc_or_memory_fault");
  CHECK(with_id(fs, "gpu.remap.pending").size() == 1);
}

TEST_CASE("fabric manager not running: every GPU's fabric state NOT_STARTED, one host finding") {
  auto r = probe("fabric_not_started");
  auto fs = gpu_findings(r.evidence);
  auto f = with_id(fs, "gpu.fabric.not_started");
  REQUIRE(f.size() == 1);
  CHECK(f[0]->fields["gpus"].size() == 8);
  CHECK(f[0]->supports[0].cause == "fabric_manager_not_running");
  CHECK_FALSE(f[0]->subject.gpu);
}

TEST_CASE("thermal throttling on a busy GPU names the pid that runs slow") {
  auto r = probe("throttled,busy");
  auto fs = gpu_findings(r.evidence);
  auto f = with_id(fs, "gpu.throttled");
  REQUIRE(f.size() == 1);
  CHECK(f[0]->subject.gpu == "0000:ab:00.0");
  CHECK(f[0]->subject.pid == 4105);
  CHECK(f[0]->summary.find("hw_thermal_slowdown") != std::string::npos);
  CHECK(f[0]->summary.find("91 C") != std::string::npos);
  CHECK(f[0]->supports[0].cause == "straggler_or_timeout_too_short");
}

TEST_CASE("PCIe-only node: no NVLink evidence and no NVLink findings") {
  auto r = probe("pcie_only");
  CHECK(of_kind(r, "nvlink.link").empty());
  auto p2p = of_kind(r, "gpu.p2p");
  REQUIRE(p2p.size() == 1);
  CHECK(p2p[0]->data["read"][0][1] == 0);
  CHECK(p2p[0]->data["read"][0][4] == 3);  // across the CPUs: IOH topology not supported
  CHECK_FALSE(problems(gpu_findings(r.evidence)));
}

TEST_CASE("no GPUs: NVML initialises and reports zero devices") {
  auto r = probe("no_gpus");
  REQUIRE(r.evidence.size() == 1);
  CHECK(r.evidence[0].availability.is_ok());
  CHECK(r.evidence[0].data["device_count"] == 0);
  CHECK(r.unchecked.empty());
}
