// GPU evidence -> findings, from hand-built evidence (as read back from a
// bundle): thresholds, P2P test judgement, totality on malformed data.
#include <catch2/catch.hpp>

#include "analysis/tree/catalogue.hpp"
#include "collectors/gpu/gpu_findings.hpp"

using namespace ccdiag;
using nlohmann::json;

namespace {

Evidence link(const std::string& gpu, int l, json t0, json t1, int interval_ms = 1000) {
  Evidence e;
  e.kind = "nvlink.link";
  e.subject.host = "n1";
  e.subject.gpu = gpu;
  e.data = {{"link", l}, {"active", true}, {"counters_t0", t0}, {"counters_t1", t1}, {"interval_ms", interval_ms}};
  return e;
}

Evidence p2p(json pairs) {
  Evidence e;
  e.kind = "gpu.p2p";
  e.subject.host = "n1";
  e.data = {{"source", "cuda"}, {"pairs", pairs}};
  return e;
}

json pair(const std::string& a, const std::string& b, const std::string& path, const std::string& status, double gbps = 0) {
  json p{{"a", a}, {"b", b}, {"expected_path", path}, {"status", status}};
  if (status == "ok") p["bandwidth_gbps"] = gbps;
  if (status == "timeout") p["reason"] = "cuMemcpyPeerAsync " + a + " -> " + b + " did not complete within 5000 ms";
  return p;
}

std::vector<const Finding*> with_id(const std::vector<Finding>& fs, const std::string& id) {
  std::vector<const Finding*> v;
  for (const auto& f : fs)
    if (f.id == id) v.push_back(&f);
  return v;
}

}  // namespace

TEST_CASE("NVLink CRC: slow growth is a warning, >= 100/s an error; a counter reset is not errors") {
  const json zero{{"replay", 0}, {"recovery", 0}, {"crc_flit", 0}, {"crc_data", 0}};
  json slow = zero;
  slow["crc_flit"] = 5;
  json fast = zero;
  fast["crc_data"] = 250;
  json reset{{"replay", 100}, {"recovery", 0}, {"crc_flit", 0}, {"crc_data", 0}};
  auto fs = gpu_findings({link("0000:18:00.0", 0, zero, slow), link("0000:2a:00.0", 0, zero, fast),
                          link("0000:3a:00.0", 0, reset, zero)});
  auto warn = with_id(fs, "nvlink.crc_rising");
  REQUIRE(warn.size() == 1);
  CHECK(warn[0]->subject.gpu == "0000:18:00.0");
  CHECK(warn[0]->severity == Severity::warning);
  auto err = with_id(fs, "nvlink.errors_rising");
  REQUIRE(err.size() == 1);
  CHECK(err[0]->subject.gpu == "0000:2a:00.0");
  CHECK(fs.size() == 2);
}

TEST_CASE("P2P copy that never completes on a PCIe pair supports IOMMU / ACS (case 012)") {
  auto fs = gpu_findings({p2p(json::array({pair("0000:02:00.0", "0000:03:00.0", "pcie", "ok", 10.2),
                                           pair("0000:02:00.0", "0000:82:00.0", "pcie", "timeout")}))});
  auto hang = with_id(fs, "gpu.p2p.copy_hang");
  REQUIRE(hang.size() == 1);
  CHECK(hang[0]->severity == Severity::critical);
  CHECK(hang[0]->fields["b"] == "0000:82:00.0");
  std::vector<std::string> causes;
  for (const auto& s : hang[0]->supports) causes.push_back(s.cause);
  CHECK(causes == std::vector<std::string>{"iommu_blocks_p2p", "pcie_acs_p2p_blocked", "gpu_driver_p2p_bug"});
  CHECK(with_id(fs, "gpu.p2p.slow").empty());
}

TEST_CASE("NVLink pair at PCIe speed, and a pair far below its peers' median") {
  json pairs = json::array();
  pairs.push_back(pair("0000:18:00.0", "0000:2a:00.0", "nvlink", "ok", 12.0));
  pairs.push_back(pair("0000:18:00.0", "0000:3a:00.0", "nvlink", "ok", 370.0));
  pairs.push_back(pair("0000:18:00.0", "0000:5d:00.0", "nvlink", "ok", 375.0));
  pairs.push_back(pair("0000:2a:00.0", "0000:3a:00.0", "nvlink", "ok", 150.0));
  pairs.push_back(pair("0000:2a:00.0", "0000:5d:00.0", "nvlink", "ok", 365.0));
  auto fs = gpu_findings({p2p(pairs)});
  auto slow = with_id(fs, "gpu.p2p.slow");
  REQUIRE(slow.size() == 2);
  CHECK(slow[0]->fields["b"] == "0000:2a:00.0");
  CHECK(slow[0]->supports[0].cause == "nvlink_down_or_degraded");
  CHECK(slow[1]->fields["b"] == "0000:3a:00.0");  // 150 < half of the 365 median
}

TEST_CASE("CUDA refusing peer access where NVML reports NVLink P2P is a finding; on PCIe it is not") {
  auto fs = gpu_findings({p2p(json::array({pair("0000:18:00.0", "0000:2a:00.0", "nvlink", "not_accessible"),
                                           pair("0000:18:00.0", "0000:9a:00.0", "pcie", "not_accessible")}))});
  auto f = with_id(fs, "gpu.p2p.no_peer_access");
  REQUIRE(f.size() == 1);
  CHECK(f[0]->fields["b"] == "0000:2a:00.0");
  CHECK(fs.size() == 1);
}

TEST_CASE("NVML library/driver version mismatch supports driver_library_mismatch") {
  Evidence e;
  e.kind = "gpu.nvml";
  e.availability = Availability::error("nvmlInitWithFlags: Driver/library version mismatch (LIB_RM_VERSION_MISMATCH)");
  e.data = {{"init_return", "LIB_RM_VERSION_MISMATCH"}};
  auto fs = gpu_findings({e});
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].supports[0].cause == "driver_library_mismatch");
}

TEST_CASE("memory thresholds: remap failure, exhausted rows, retired page limits") {
  Evidence e;
  e.kind = "gpu.device";
  e.subject.gpu = "0000:18:00.0";
  e.data = {{"index", 0},
            {"remapped_rows", {{"correctable", 0}, {"uncorrectable", 600}, {"pending", false}, {"failure", true}}},
            {"retired_pages", {{"single_bit", 50}, {"double_bit", 15}, {"pending", true}}}};
  auto fs = gpu_findings({e});
  CHECK(with_id(fs, "gpu.remap.failure").size() == 1);
  CHECK(with_id(fs, "gpu.remap.exhausted").empty());  // failure already says it
  CHECK(with_id(fs, "gpu.retired_pages.limit").size() == 1);
  CHECK(with_id(fs, "gpu.retired_pages.pending").size() == 1);
  e.data["remapped_rows"]["failure"] = false;
  CHECK(with_id(gpu_findings({e}), "gpu.remap.exhausted").size() == 1);
}

TEST_CASE("malformed evidence data (a hand-edited bundle) is skipped, never thrown on") {
  std::vector<Evidence> ev;
  for (const char* kind : {"gpu.nvml", "gpu.device", "nvlink.link", "gpu.p2p"}) {
    for (json data : {json(nullptr), json(42), json("x"), json::array({1, 2}),
                      json{{"lost", "yes"}, {"ecc", 3}, {"fabric", {{"state", "x"}}}, {"processes", {{"pid", -1}}}},
                      json{{"link", -3}, {"active", 1}, {"counters_t0", {{"replay", "1"}}}, {"counters_t1", nullptr}},
                      json{{"source", "cuda"}, {"pairs", {1, nullptr, {{"status", "ok"}, {"bandwidth_gbps", "fast"}}}}},
                      json{{"clocks_event_reasons", -8}, {"remapped_rows", {{"failure", 1}}}, {"retired_pages", json::array()}}}) {
      Evidence e;
      e.kind = kind;
      e.data = data;
      ev.push_back(e);
    }
  }
  std::vector<Finding> fs;
  REQUIRE_NOTHROW(fs = gpu_findings(ev));
}

TEST_CASE("every cause a GPU finding supports is in the catalogue") {
  // Build the evidence of every finding kind and check each supported cause.
  Evidence nv;
  nv.kind = "gpu.nvml";
  nv.availability = Availability::timeout("nvmlInitWithFlags did not return within 3000 ms");
  Evidence dev;
  dev.kind = "gpu.device";
  dev.subject.gpu = "0000:18:00.0";
  dev.data = {{"reset_required", true},
              {"recovery_action", "gpu_reset"},
              {"ecc", {{"volatile_uncorrected", 1}}},
              {"remapped_rows", {{"uncorrectable", 1}, {"pending", true}, {"failure", true}}},
              {"retired_pages", {{"single_bit", 70}, {"double_bit", 0}, {"pending", true}}},
              {"clocks_event_reasons", 0x80},
              {"fabric", {{"state", 3}, {"status", 23}, {"health_summary", 2}}}};
  Evidence lost = dev;
  lost.data = {{"lost", true}};
  Evidence hung = dev;
  hung.availability = Availability::timeout("x");
  Evidence fab = dev;
  fab.data = {{"fabric", {{"state", 1}}}};
  Evidence fab2 = dev;
  fab2.data = {{"fabric", {{"state", 2}}}};
  Evidence fab3 = dev;
  fab3.data = {{"fabric", {{"state", 3}, {"status", 0}, {"health_summary", 3}}}};
  std::vector<Evidence> ev{nv, dev, lost, hung, fab, fab2, fab3};
  ev.push_back(p2p(json::array({pair("a", "b", "nvlink", "timeout"), pair("a", "c", "pcie", "timeout"),
                                pair("a", "d", "pcie", "error"), pair("a", "e", "nvlink", "not_accessible"),
                                pair("a", "f", "nvlink", "ok", 1.0), pair("a", "g", "pcie", "ok", 1.0)})));
  ev.push_back(link("0000:18:00.0", 0, {{"replay", 0}}, {{"replay", 1}}));
  auto fs = gpu_findings(ev);
  CHECK(fs.size() >= 15);
  for (const auto& f : fs) {
    CHECK(f.layer == Layer::hardware);
    for (const auto& s : f.supports) {
      INFO(f.id << " supports " << s.cause);
      CHECK(find_cause(s.cause) != nullptr);
      CHECK(s.weight > 1.0);
    }
  }
}
