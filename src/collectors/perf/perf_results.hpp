// Benchmark results as printed by nccl-tests (text of every format version and
// `-J` JSON) and perftest (ib_*_bw / ib_*_lat text and --out_json), parsed by
// header names, never by column position (docs/perf.md "Input formats").
// Parsing is pure: bytes in, PerfRun out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/perf_run.hpp"
#include "ccdiag/result.hpp"

namespace ccdiag::perf {

// nccl-tests text output (any version). Errors only when no result table is found.
Result<PerfRun> parse_nccl_tests_text(std::string_view text, const std::string& file);
// nccl-tests `-J` JSON (file versions 1-3, both spellings of average_bus_bandwidth).
Result<PerfRun> parse_nccl_tests_json(std::string_view text, const std::string& file);
// perftest text output of one side (client or server).
Result<PerfRun> parse_perftest_text(std::string_view text, const std::string& file);
// perftest --out_json.
Result<PerfRun> parse_perftest_json(std::string_view text, const std::string& file);

// Sniffs the format and dispatches; `file` names the input in errors.
Result<PerfRun> parse_results(std::string_view text, const std::string& file);

// nccl-tests program name ("all_reduce_perf_mpi", "./build/alltoall_perf") -> "all_reduce", "alltoall".
std::string collective_from_program(std::string_view prog);

}  // namespace ccdiag::perf
