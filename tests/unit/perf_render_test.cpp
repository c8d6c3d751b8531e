// The file outputs of `ccdiag perf` (report/perf_render.hpp) on hand-built
// summaries: base units, absent evidence not written, escaping, and the
// chart's expected line at the y its value maps to.
#include <catch2/catch.hpp>

#include <regex>
#include <sstream>

#include "report/perf_render.hpp"
#include "report/prom_text.hpp"

using namespace ccdiag;

namespace {

perf::RunSummary nccl_run() {
  perf::RunSummary s;
  s.file = "dir/all_reduce_perf.txt";
  s.tool = "nccl-tests";
  s.collective = "all_reduce";
  s.hosts = {"a", "b"};
  s.ranks = 16;
  s.unit = "GB/s";
  s.points = {{1 << 20, 20.0}, {1 << 30, 180.0}, {int64_t{8} << 30, 200.0}};
  s.plateau = 200.0;
  s.plateau_size = int64_t{8} << 30;
  s.plateau_from = int64_t{8} << 30;
  s.latency_floor_us = 25.5;
  s.status = "unjudged";
  return s;
}

}  // namespace

TEST_CASE("perf prom: base units, and no expected or ratio series without a bundle", "[perf]") {
  auto s = nccl_run();
  const auto text = render_perf_prom({s}, 1700000000);
  CHECK(text.find("ccdiag_perf_plateau_bandwidth_bytes_per_second{collective=\"all_reduce\",host=\"a,b\",ranks=\"16\",device=\"\","
                  "file=\"all_reduce_perf.txt\"} 200000000000") != std::string::npos);
  CHECK(text.find("ccdiag_perf_latency_floor_seconds{") != std::string::npos);
  CHECK(text.find("2.55e-05") != std::string::npos);
  CHECK(text.find("ccdiag_perf_expected_bandwidth") == std::string::npos);
  CHECK(text.find("ccdiag_perf_plateau_expected_ratio") == std::string::npos);
  CHECK(text.find("ccdiag_perf_wrong_elements") == std::string::npos);  // not checked is not 0 wrong
  CHECK(text.back() == '\n');

  s.expected = 250.0;
  s.expected_present = 250.0;
  s.wrong = 0;
  s.status = "below_expected";
  const auto judged = render_perf_prom({s}, 1700000000);
  CHECK(judged.find("kind=\"nominal\"} 250000000000") != std::string::npos);
  CHECK(judged.find("ccdiag_perf_plateau_expected_ratio{collective=\"all_reduce\",host=\"a,b\",ranks=\"16\",device=\"\",file=\"all_reduce_perf.txt\"} 0.8\n") !=
        std::string::npos);
  CHECK(judged.find("ccdiag_perf_wrong_elements{") != std::string::npos);
}

TEST_CASE("perf prom: perftest Gb/s become bytes per second; labels escaped", "[perf]") {
  perf::RunSummary s;
  s.file = "ib\"w\\bw\n.txt";
  s.tool = "perftest";
  s.collective = "ib_write_bw";
  s.nic = "mlx5_0";
  s.unit = "Gb/s";
  s.plateau = 400.0;
  s.status = "unjudged";
  const auto text = render_perf_prom({s}, 1);
  CHECK(text.find("device=\"mlx5_0\",file=\"ib\\\"w\\\\bw\\n.txt\"} 50000000000\n") != std::string::npos);
  CHECK(prom_file_name_ok("x/ccdiag-perf.prom"));
  CHECK_FALSE(prom_file_name_ok(".prom"));
  CHECK_FALSE(prom_file_name_ok("perf.txt"));
}

TEST_CASE("perf html: CSP first, escaped, expected line at its value's y", "[perf]") {
  auto s = nccl_run();
  s.file = "<script>x</script>";
  s.expected = 250.0;
  Report r;
  r.verdict.root_cause = "no_problem_found";
  std::ostringstream out;
  render_perf_html({s}, r, out);
  const std::string h = out.str();
  CHECK(h.find("<head>\n<meta http-equiv=\"Content-Security-Policy\"") != std::string::npos);
  CHECK(h.find("<script") == std::string::npos);
  CHECK(h.find("&lt;script&gt;x&lt;/script&gt;") != std::string::npos);
  std::smatch m;
  const std::string svg = h.substr(h.find("<svg"));
  REQUIRE(std::regex_search(svg, m, std::regex("data-y-max=\"([0-9.]+)\" data-plot-top=\"([0-9.]+)\" data-plot-bottom=\"([0-9.]+)\"")));
  const double ymax = std::stod(m[1]), top = std::stod(m[2]), bottom = std::stod(m[3]);
  REQUIRE(std::regex_search(svg, m, std::regex("<line class=\"expected\"[^>]*y1=\"([0-9.]+)\"")));
  CHECK(std::stod(m[1]) == Approx(bottom - 250.0 / ymax * (bottom - top)).margin(0.01));
  CHECK(ymax >= 250.0);
}
