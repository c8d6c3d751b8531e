// Fuzzes the NCCL COLL-log reader and the slow rank / link analysis behind it
// (docs/perf.md "NCCL INFO logs"). The input is read as one log; its lines
// are then also replayed as a second process's (host renamed) so the
// cross-rank matching and the statistics see several processes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/perf/slow_timing.hpp"
#include "ccdiag/utf8.hpp"
#include "collectors/perf/nccl_coll_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ccdiag::perf::CollLog log;
  ccdiag::perf::read_coll_log(text, "fuzz-a", log);
  std::string other = text;
  for (size_t at = 0; (at = other.find(':', at)) != std::string::npos; at += 2) other.insert(at, "b");
  ccdiag::perf::read_coll_log(other, "fuzz-b", log);
  auto a = ccdiag::perf::analyze_timings(log.timings, "NCCL INFO logs", log.resolution_ms);
  (void)ccdiag::perf::timing_findings(a);
  // As `ccdiag perf --json` prints it: text from the log (host names) may be
  // any bytes, repaired to UTF-8 (a plain dump() threw on them: the first finding).
  (void)ccdiag::json_text(ccdiag::perf::timing_json(a));
  (void)ccdiag::perf::timing_problem(a);
  return 0;
}
