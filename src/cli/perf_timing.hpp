// `ccdiag perf --rings` / `--log`: reads the profiler plugin's flight files and
// NCCL INFO logs into timings, runs the slow rank / link analysis on them, and
// renders its text section (docs/perf.md "Profiler rings", "NCCL INFO logs").
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/perf/slow_timing.hpp"
#include "ccdiag/result.hpp"

namespace ccdiag {

// Flight files (ccdiag-nccl-*.fr, *.fr.b64) named, or under named directories (three levels: one
// snapshot per subdirectory). Unreadable files go to `bad`; an error when none is found.
Result<perf::TimingAnalysis> load_ring_timings(const std::vector<std::string>& args, std::vector<Error>& bad);

// NCCL INFO logs (files or directories). A file without COLL lines, or without wall-clock
// timestamps on them, goes to `bad`; an error when no file has both.
Result<perf::TimingAnalysis> load_log_timings(const std::vector<std::string>& args, std::vector<Error>& bad);

void render_timing_text(const perf::TimingAnalysis& a, std::ostream& out);

}  // namespace ccdiag
