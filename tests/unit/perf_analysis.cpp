// Expected bandwidth from a bundle's topology and the verdicts
// (ok / below_expected with its bottleneck / regression / unjudged), on
// bundles `ccdiag collect` wrote for the fixture sysroots
// (tests/fixtures/perf/bundles) and the scenario results.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "analysis/perf/perf_analysis.hpp"
#include "collectors/perf/perf_results.hpp"
#include "analysis/perf/topology.hpp"
#include "pipeline/ingest.hpp"

using namespace ccdiag;
using namespace ccdiag::perf;

namespace {

std::string fx(const std::string& rel) { return std::string(CCDIAG_FIXTURES) + "/perf/" + rel; }

PerfRun run_of(const std::string& rel) {
  std::ifstream in(fx(rel), std::ios::binary);
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  auto r = parse_results(ss.str(), rel);
  REQUIRE(r.ok());
  return *r;
}

std::vector<HostTopology> topo_of(const std::string& bundle) {
  DiagnoseInputs in;
  in.bundles = {fx("bundles/" + bundle)};
  auto set = load_inputs(in);
  REQUIRE(set.ok());
  std::vector<HostTopology> t;
  for (const auto& h : set->hosts) t.push_back(topology_from_evidence(set->evidence, h));
  return t;
}

RunAnalysis judged(const PerfRun& run, const std::vector<HostTopology>& topo, const Baseline* b = nullptr) {
  RunAnalysis a = measure(run);
  judge(a, topo, b);
  return a;
}

}  // namespace

TEST_CASE("perf: PCIe and NVLink arithmetic", "[perf]") {
  CHECK(pcie_gbs(16, 16) == Approx(31.5).epsilon(0.01));
  CHECK(pcie_gbs(32, 16) == Approx(63.0).epsilon(0.01));
  CHECK(pcie_gbs(2.5, 16) == Approx(4.0));
  CHECK(nvlink_link_gbs(4) * 18 == Approx(450));
  CHECK(ib_lane_gbps("NDR") == 100);
  CHECK_FALSE(ib_lane_gbps("bogus").has_value());
}

TEST_CASE("perf: topology of the HGX fixture bundle", "[perf]") {
  const auto t = topo_of("hgx-healthy");
  REQUIRE(t.size() == 1);
  CHECK(t[0].host == "gpu-node-017");
  REQUIRE(t[0].gpus.size() == 8);
  REQUIRE(t[0].nics.size() == 8);
  CHECK(t[0].gdr == true);
  CHECK(t[0].nics[0].rate_gbps == 400);
  for (const auto& g : t[0].gpus) {
    CHECK(g.pcie.nominal_gbs == Approx(63.0).epsilon(0.01));
    CHECK_FALSE(g.pcie.downtrained);  // idle Gen1 speed is not a downtrain
    CHECK(g.model_links == 18);
  }
  REQUIRE(t[0].nics[3].pcie.has_value());
  CHECK(t[0].nics[3].pcie->present_gbs == Approx(31.5).epsilon(0.01));
  // The fingerprint ignores how links trained, so baselines survive a downtrain.
  CHECK(topo_of("nic-x8")[0].fingerprint() == t[0].fingerprint());
  CHECK(topo_of("no-gdr")[0].fingerprint() != t[0].fingerprint());
}

TEST_CASE("perf: healthy two-host ring is ok against the derived plateau", "[perf]") {
  const auto topo = topo_of("hgx-healthy");
  const auto run = run_of("scenario/all_reduce_perf-2x8-healthy.txt");
  const auto a = judged(run, topo);
  REQUIRE(a.expected.has_value());
  CHECK(a.expected->nominal == Approx(8 * 31.51 * 0.94).epsilon(0.01));
  CHECK(a.expected->present == Approx(a.expected->nominal));
  CHECK(a.plateau == Approx(231.95));  // sizes within 4x of 8G: median of 4G and 8G (231.6, 232.3)
  CHECK(a.verdict.status == "ok");
  CHECK(a.expected->formula.find("8 GPUs/host") != std::string::npos);
}

TEST_CASE("perf: a NIC trained at x8 explains a below-expected ring", "[perf]") {
  const auto topo = topo_of("nic-x8");
  const auto run = run_of("scenario/all_reduce_perf-2x8-nic-x8.txt");  // analyses point into their run
  const auto a = judged(run, topo);
  REQUIRE(a.expected.has_value());
  CHECK(a.expected->present == Approx(8 * 15.75 * 0.94).epsilon(0.01));
  CHECK(a.verdict.status == "below_expected");
  CHECK(a.verdict.shortfall == Approx(1 - 115.45 / a.expected->nominal).epsilon(0.01));
  CHECK(a.verdict.bottleneck.find("NIC mlx5_3 PCIe link downtrained") != std::string::npos);
  CHECK(a.verdict.bottleneck.find("measurement matches") != std::string::npos);
  CHECK(a.verdict.bottleneck_cause == "pcie_link_degraded");
  const auto f = to_findings({a});
  REQUIRE(f.size() == 1);
  CHECK(f[0].id == "perf.below_expected");
  REQUIRE(f[0].supports.size() == 1);
  CHECK(f[0].supports[0].cause == "pcie_link_degraded");
  CHECK(f[0].supports[0].weight == 20.0);
}

TEST_CASE("perf: the x8 GPU link ties the NICs' Gen4 x16 links: healthy ring, no false blame", "[perf]") {
  const auto topo = topo_of("gpu-x8");
  REQUIRE(topo[0].gpus.size() == 8);
  bool seen = false;
  for (const auto& g : topo[0].gpus)
    if (g.pcie.downtrained) {
      seen = true;
      CHECK(g.pcie.present_gbs == Approx(31.5).epsilon(0.01));
    }
  CHECK(seen);
  const auto a = judged(run_of("scenario/all_reduce_perf-2x8-healthy.txt"), topo);
  CHECK(a.verdict.status == "ok");
}

TEST_CASE("perf: no GPUDirect RDMA named when the links do not explain the shortfall", "[perf]") {
  const auto a = judged(run_of("scenario/all_reduce_perf-2x8-nogdr.txt"), topo_of("no-gdr"));
  CHECK(a.verdict.status == "below_expected");
  CHECK(a.verdict.bottleneck_cause == "gpudirect_rdma_module_missing");
  CHECK(a.verdict.bottleneck.find("no GPUDirect RDMA on gpu-node-017") != std::string::npos);
  // The same numbers on the healthy bundle: below expected, but nothing in the topology explains it.
  const auto b = judged(run_of("scenario/all_reduce_perf-2x8-nogdr.txt"), topo_of("hgx-healthy"));
  CHECK(b.verdict.status == "below_expected");
  CHECK(b.verdict.bottleneck_cause.empty());
  CHECK(b.verdict.bottleneck.find("not explained") != std::string::npos);
}

TEST_CASE("perf: single-host NVLS run against the H100 model's NVLink", "[perf]") {
  const auto a = judged(run_of("scenario/all_reduce_perf-1x8-nvls.txt"), topo_of("hgx-healthy"));
  REQUIRE(a.expected.has_value());
  CHECK(a.expected->nominal == Approx(18 * 25 * 0.80));
  CHECK(a.verdict.status == "ok");
  CHECK(a.plateau == Approx(478.87));
}

TEST_CASE("perf: nothing to judge is said, not passed", "[perf]") {
  // No bundle for these hosts.
  const auto gb10 = run_of("real/nccl-tests-2.20.0-all_reduce-2host-gb10.txt");
  auto a = judged(gb10, topo_of("hgx-healthy"));
  CHECK(a.verdict.status == "unjudged");
  // Collective unknown.
  const auto old = run_of("real/nccl-tests-old-error-column-2gpu.txt");
  a = judged(old, {});
  CHECK(a.verdict.status == "unjudged");
  CHECK(to_findings({a})[0].role == FindingRole::context);
}

TEST_CASE("perf: baseline regression with a noise-aware threshold", "[perf]") {
  const auto healthy = run_of("scenario/all_reduce_perf-2x8-healthy.txt");
  const auto slower = run_of("scenario/all_reduce_perf-2x8-slower.txt");
  std::vector<RunAnalysis> base = {measure(healthy)};
  auto bj = baseline_json(base, {}, nullptr, "2026-11-30T00:00:00Z");
  auto b = parse_baseline(bj, "b.json");
  REQUIRE(b.ok());
  REQUIRE(b->entries.size() == 1);
  CHECK(b->entries[0].key == "all_reduce/16r2h/8589934592");
  auto a = judged(slower, {}, &*b);
  CHECK(a.verdict.status == "regression");
  CHECK(a.verdict.shortfall == Approx(1 - 197.75 / 231.95).epsilon(0.01));
  CHECK(judged(healthy, {}, &*b).verdict.status == "ok");
  // A noisy baseline widens the threshold: samples 231.95, 180, 260 -> 3 x 1.4826 x MAD / median > 15 %.
  b->entries[0].samples = {231.95, 180.0, 260.0};
  a = judged(slower, {}, &*b);
  CHECK(a.verdict.status == "ok");
  CHECK(a.verdict.baseline_threshold > 0.15);
  CHECK_FALSE(parse_baseline(nlohmann::json{{"format", "x"}}, "b").ok());
}

TEST_CASE("perf: data corruption is the first finding whatever the bandwidth", "[perf]") {
  const auto run = run_of("scenario/all_reduce_perf-2x8-wrong.txt");
  const auto a = judged(run, topo_of("hgx-healthy"));
  CHECK(a.wrong_total == 6);  // 3 in each half
  CHECK(run.out_of_bounds == 6);
  const auto json_run = run_of("scenario/all_reduce_perf-2x8-wrong.json");
  const auto b = judged(json_run, topo_of("hgx-healthy"));
  CHECK(b.wrong_total == 12);
  const auto f = to_findings({a, b});
  REQUIRE(f.size() >= 4);
  CHECK(f[0].id == "perf.data_corruption");
  CHECK(f[1].id == "perf.data_corruption");
  CHECK(f[0].severity == Severity::critical);
  REQUIRE(f[0].provenance[0].line.has_value());
}

TEST_CASE("perf: ib_write_bw judged against the NIC's port rate and PCIe path", "[perf]") {
  // Result block in perftest's --report_gbits layout (docs/perf.md), on the fixture host's mlx5_3.
  const std::string text =
      "                    RDMA_Write BW Test\n"
      " Dual-port       : OFF\t\tDevice         : mlx5_3\n"
      " Number of qps   : 4\t\tTransport type : IB\n"
      " Link type       : IB\n"
      "---------------------------------------------------------------------------------------\n"
      " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
      " 8388608    5000             121.40             120.88               0.001801\n"
      "---------------------------------------------------------------------------------------\n";
  auto run = parse_results(text, "ib_write_bw-mlx5_3.txt");
  REQUIRE(run.ok());
  // Healthy host: the Gen4 x16 link (252 Gb/s) bounds the 400 Gb/s port; 120.9 is far below.
  auto a = judged(*run, topo_of("hgx-healthy"));
  REQUIRE(a.expected.has_value());
  CHECK(a.expected->nominal == Approx(252.1).epsilon(0.01));
  CHECK(a.verdict.status == "below_expected");
  CHECK(a.verdict.bottleneck_cause.empty());
  // The x8 host: the degraded link allows 126 Gb/s, which the measurement matches.
  a = judged(*run, topo_of("nic-x8"));
  CHECK(a.verdict.status == "below_expected");
  CHECK(a.verdict.bottleneck_cause == "pcie_link_degraded");
  CHECK(a.verdict.bottleneck.find("measurement matches") != std::string::npos);
  CHECK(a.key == "ib_write_bw/mlx5_3/8388608");
}
