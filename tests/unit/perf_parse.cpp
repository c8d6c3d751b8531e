// nccl-tests and perftest parsers on real outputs from public threads
// (tests/fixtures/perf/real, sources in its README) and on the scenario files.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "analysis/perf/perf_analysis.hpp"
#include "collectors/perf/perf_results.hpp"

using namespace ccdiag;
using namespace ccdiag::perf;

namespace {

std::string slurp(const std::string& rel) {
  std::ifstream in(std::string(CCDIAG_FIXTURES) + "/perf/" + rel, std::ios::binary);
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

PerfRun parse(const std::string& rel) {
  auto r = parse_results(slurp(rel), rel);
  INFO(rel << ": " << (r ? "" : r.error().one_line()));
  REQUIRE(r.ok());
  return *r;
}

}  // namespace

TEST_CASE("perf: nccl-tests 2.20 text with version line, bus ids with domain, two hosts", "[perf]") {
  const auto r = parse("real/nccl-tests-2.20.0-all_reduce-2host-gb10.txt");
  CHECK(r.collective == "all_reduce");
  CHECK(r.version == "2.20.0");
  CHECK(r.nccl_version == 23102);
  CHECK(r.error_column == "#wrong");
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[1].host == "spark-dbf4");
  CHECK(r.devices[1].bus == "000f:01:00");
  CHECK(r.devices[1].name == "NVIDIA GB10");
  CHECK(r.hosts().size() == 2);
  REQUIRE(r.rows.size() == 4);
  CHECK(r.rows[3].size_bytes == 65536);
  CHECK(r.rows[3].oop.time_us == Approx(67.93));
  CHECK(r.rows[3].oop.busbw_gbs == Approx(0.96));
  CHECK(r.rows[3].ip.busbw_gbs == Approx(1.01));
  CHECK(r.rows[3].oop.wrong == 0);
  const auto a = measure(r);
  CHECK(a.latency_floor_us == Approx(31.67));
  CHECK(a.latency_floor_size == 16384);
  CHECK(a.plateau_size == 65536);
}

TEST_CASE("perf: nccl-tests 2.13 all_gather (Group, short bus id), collective from the program line", "[perf]") {
  const auto r = parse("real/nccl-tests-2.13.6-all_gather_perf-1gpu.txt");
  CHECK(r.collective == "all_gather");  // from the file name: 2.13 prints no program name
  REQUIRE(r.devices.size() == 1);
  CHECK(r.devices[0].bus == "0x01");
  CHECK(r.devices[0].host == "nixos-desktop");
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].redop == "none");
  CHECK(r.rows[0].oop.algbw_gbs == Approx(1816.16));
  CHECK(r.rows[0].ip.algbw_gbs == Approx(619657.10));  // 9-character value: still one token
  CHECK(r.out_of_bounds == 0);
}

TEST_CASE("perf: a one-sided row (no in-place half) still parses", "[perf]") {
  const auto r = parse("real/nccl-tests-2.13-all_reduce-8x4090-tree.txt");
  CHECK(r.devices.size() == 8);
  CHECK(r.hosts() == std::vector<std::string>{"gpu59"});
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].oop.time_us == Approx(42.56));
  CHECK_FALSE(r.rows[0].ip.present());
}

TEST_CASE("perf: old format with the float `error` column is not read as wrong counts", "[perf]") {
  const auto r = parse("real/nccl-tests-old-error-column-2gpu.txt");
  CHECK(r.error_column == "error");
  REQUIRE(r.rows.size() == 12);
  CHECK(r.rows[0].oop.max_error == 0.0);
  CHECK_FALSE(r.rows[0].oop.wrong.has_value());
  CHECK(r.avg_busbw == Approx(6.6972));
  CHECK(r.collective.empty());
  const auto a = measure(r);
  CHECK(a.wrong_total == 0);
  // plateau: sizes within 4x of the largest (128M, 64M, 32M) -> median of 20.34, 21.40, 20.51
  CHECK(a.plateau == Approx(20.51));
  CHECK(a.plateau_points == 3);
}

TEST_CASE("perf: column order is taken from the header, not from positions", "[perf]") {
  // Same data with an extra -I 1 style column block and a -S timestamp: values still land by name.
  const std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong   i_min   i_max   i_p99  i_cv%     time   algbw   busbw  #wrong   i_min   i_max   i_p99  i_cv%\n"
      "   268435456      67108864     float     sum      -1  1109.55  241.93  423.38       2  1100.1  1120.2  1120.2   0.41  1113.44  241.09  421.90       0  1101.0  1130.0  1130.0   0.50 2026-11-30 04:10:02\n";
  auto r = parse_nccl_tests_text(text, "all_reduce_perf.out");
  REQUIRE(r.ok());
  REQUIRE(r->rows.size() == 1);
  CHECK(r->rows[0].oop.busbw_gbs == Approx(423.38));
  CHECK(r->rows[0].oop.wrong == 2);
  CHECK(r->rows[0].ip.time_us == Approx(1113.44));
  CHECK(r->rows[0].ip.busbw_gbs == Approx(421.90));
  CHECK(r->collective == "all_reduce");
}

TEST_CASE("perf: -c 0 prints N/A for #wrong: no count, no corruption", "[perf]") {
  const std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
      "  4294967296    1073741824     float     sum      -1  34771.4  123.52  231.60     N/A  34861.7  123.20  231.00     N/A\n";
  auto r = parse_nccl_tests_text(text, "x");
  REQUIRE(r.ok());
  CHECK_FALSE(r->rows[0].oop.wrong.has_value());
  CHECK(measure(*r).wrong_total == 0);
}

TEST_CASE("perf: failure breadcrumbs without a table are an input error naming the failure", "[perf]") {
  const std::string text = "# nThread 1 nGpus 1 minBytes 8 maxBytes 8\n gpu017: Test timeout (120s) common.cu:412\n";
  auto r = parse_nccl_tests_text(text, "t.txt");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("Test timeout") != std::string::npos);
  CHECK_FALSE(parse_results("hello\nworld\n", "x").ok());
  CHECK_FALSE(parse_results("", "x").ok());
  CHECK_FALSE(parse_results("{\"a\": 1}", "x.json").ok());
  CHECK_FALSE(parse_results("{bad json", "x.json").ok());
  // Fields of unexpected types are input errors, not exceptions.
  CHECK_FALSE(parse_results(R"({"version":"three","results":[{"size":1024}]})", "x.json").ok());
  CHECK_FALSE(parse_results(R"({"test_info":{"test":7},"results":{}})", "x.json").ok());
  CHECK_FALSE(parse_baseline(nlohmann::json{{"format", "ccdiag-perf-baseline"}, {"version", 1}, {"host", 3}}, "b").ok());
}

TEST_CASE("perf: nccl-tests -J JSON v3 with wrong counts, string root, env reduced", "[perf]") {
  const auto r = parse("scenario/all_reduce_perf-2x8-wrong.json");
  CHECK(r.format == "nccl-tests json v3");
  CHECK(r.collective == "all_reduce");
  CHECK(r.nccl_version == 23007);
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[1].root == "-1");
  CHECK(r.rows[1].oop.wrong == 12);
  CHECK(r.out_of_bounds == 12);
  CHECK(r.avg_busbw == Approx(231.05));
  CHECK(r.devices.size() == 16);
  CHECK(r.hosts().size() == 2);
  CHECK(r.nccl_env == std::vector<std::string>{"NCCL_ALGO=Ring"});  // HOME and SECRET_TOKEN never kept
}

TEST_CASE("perf: the pre-2.17.9 misspelled average key is read", "[perf]") {
  const std::string j =
      R"({"version":1,"args":["all_gather_perf"],"results":[{"size":1024,"count":16,"type":"float","redop":"none","root":"    -1",)"
      R"("out_of_place":{"time":"nan","alg_bw":1.5,"bus_bw":1.3,"nwrong":null},"in_place":{"time":5.0,"alg_bw":1.4,"bus_bw":1.2,"nwrong":0}}],)"
      R"("average_bus_bandwidith":{"bandwidith":1.25,"okay":"unchecked"}})";
  auto r = parse_results(j, "ag.json");
  REQUIRE(r.ok());
  CHECK(r->avg_busbw == Approx(1.25));
  CHECK(r->collective == "all_gather");
  CHECK_FALSE(r->rows[0].oop.time_us.has_value());  // "nan"
  CHECK_FALSE(r->rows[0].oop.wrong.has_value());    // null: checking off
}

TEST_CASE("perf: perftest text in Gb/sec and in MB/sec (MiB/s) units", "[perf]") {
  const auto a = parse("real/perftest-ib_write_bw-postlist-gbits.txt");
  CHECK(a.tool == Tool::perftest);
  CHECK(a.test_name == "RDMA_Write Post List BW Test");
  CHECK(a.collective == "ib_write_bw");
  CHECK(a.nic == "ib0");
  CHECK(a.link_type == "Ethernet");
  CHECK(a.qps == 1);
  REQUIRE(a.pt_rows.size() == 1);
  CHECK(a.pt_rows[0].size_bytes == 8);
  CHECK(a.pt_rows[0].iterations == 224958464);
  CHECK(a.pt_rows[0].bw_avg_gbps == Approx(0.48));
  CHECK(a.pt_rows[0].msg_rate_mpps == Approx(7.498617));

  const auto b = parse("real/perftest-ib_send_bw-mb.txt");
  CHECK(b.collective == "ib_send_bw");  // no title: from the file name
  REQUIRE(b.pt_rows.size() == 1);
  CHECK(b.pt_rows[0].bw_avg_gbps == Approx(5544.28 * 1048576.0 * 8 / 1e9));  // 46.5 Gb/s
}

TEST_CASE("perf: perftest latency table by header names", "[perf]") {
  const std::string text =
      "                    RDMA_Read Latency Test\n"
      " Dual-port       : OFF\t\tDevice         : mlx5_3\n"
      "---------------------------------------------------------------------------------------\n"
      " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
      " 2       10000          1.84           5.73         1.89             1.90             0.05            2.02                    5.73   \n"
      "---------------------------------------------------------------------------------------\n";
  auto r = parse_results(text, "lat.txt");
  REQUIRE(r.ok());
  CHECK(r->collective == "ib_read_lat");
  CHECK(r->latency_test);
  REQUIRE(r->pt_rows.size() == 1);
  CHECK(r->pt_rows[0].t_typical_us == Approx(1.89));
  CHECK(r->pt_rows[0].p99_us == Approx(2.02));
  CHECK(r->pt_rows[0].p999_us == Approx(5.73));
  const auto m = measure(*r);
  CHECK(m.latency_floor_us == Approx(1.89));
  CHECK_FALSE(m.plateau.has_value());
}

TEST_CASE("perf: parsers survive mutated inputs (deterministic byte flips, truncations)", "[perf]") {
  // A cheap stand-in for fuzz/perf_results_fuzz.cpp in every build: never a crash, an error or a run.
  const std::vector<std::string> seeds = {slurp("real/nccl-tests-2.20.0-all_reduce-2host-gb10.txt"),
                                          slurp("real/perftest-ib_write_bw-postlist-gbits.txt"),
                                          slurp("scenario/all_reduce_perf-2x8-wrong.json")};
  uint32_t x = 2463534242u;
  auto next = [&] { return x ^= x << 13, x ^= x >> 17, x ^= x << 5; };
  size_t ok = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string s = seeds[i % seeds.size()];
    const int flips = 1 + next() % 8;
    for (int k = 0; k < flips; ++k) s[next() % s.size()] = static_cast<char>(next() & 0xff);
    if (i % 5 == 0) s.resize(next() % s.size());
    auto r = parse_results(s, "m");
    if (r) {
      ++ok;
      auto a = measure(*r);
      judge(a, {}, nullptr);
      (void)run_json(a);
    }
  }
  CHECK(ok > 100);  // most mutations keep a parsable table
}

TEST_CASE("perf: perftest counts out of range are dropped, not cast or thrown (perf_results_fuzz)", "[perf]") {
  // Found by perf_results_fuzz: a QP count past int made std::stoi throw out
  // of the parser (std::terminate), and a #bytes of 6.55e38 was cast to
  // int64 (undefined behaviour). Both come from a real header, corrupted.
  std::string text = slurp("real/perftest-ib_write_bw-postlist-gbits.txt");
  const std::string qps = "Number of qps   : 1";
  text.replace(text.find(qps), qps.size(), "Number of qps   : 99999999999999999999");
  const std::string row = " 8          224958464";
  text.replace(text.find(row), row.size(), " 6.55e+38   1e300");
  Result<PerfRun> res = make_error("not parsed", "corrupt.txt");
  REQUIRE_NOTHROW(res = parse_results(text, "corrupt.txt"));
  REQUIRE(res.ok());
  const PerfRun& r = *res;
  CHECK(r.tool == Tool::perftest);
  CHECK(r.qps == 0);
  REQUIRE(r.pt_rows.size() == 1);
  CHECK(r.pt_rows[0].size_bytes == 0);
  CHECK(r.pt_rows[0].iterations == 0);
}

TEST_CASE("perf: an nccl-tests device line with numbers past int is no device line, never a throw (perf_results_fuzz)",
          "[perf]") {
  // Found by perf_results_fuzz: std::stoll on a 25-digit pid threw
  // out_of_range out of the parser (std::terminate). A real 2-host header,
  // one pid and one rank corrupted: those lines are dropped, the rest parses.
  std::string text = slurp("real/nccl-tests-2.20.0-all_reduce-2host-gb10.txt");
  const std::string pid = "Pid 1666603";
  text.replace(text.find(pid), pid.size(), "Pid 9999999999999999999999999");
  const std::string rank = "Rank  1 Group";
  text.replace(text.find(rank), rank.size(), "Rank  99999999999 Group");
  Result<PerfRun> res = make_error("not parsed", "corrupt.txt");
  REQUIRE_NOTHROW(res = parse_results(text, "corrupt.txt"));
  REQUIRE(res.ok());
  CHECK(res->devices.empty());
  CHECK_FALSE(res->rows.empty());
}
