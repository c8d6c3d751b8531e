// Fuzzes the benchmark-output parsers of `ccdiag perf` (nccl-tests text and JSON,
// perftest text and JSON) and the measurements taken from what they return.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/perf/perf_analysis.hpp"
#include "collectors/perf/perf_results.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (auto* parse : {&ccdiag::perf::parse_results, &ccdiag::perf::parse_nccl_tests_text, &ccdiag::perf::parse_perftest_text}) {
    auto r = parse(text, "fuzz");
    if (r) {
      auto a = ccdiag::perf::measure(*r);
      ccdiag::perf::judge(a, {}, nullptr);
      (void)ccdiag::perf::run_json(a);
    }
  }
  return 0;
}
