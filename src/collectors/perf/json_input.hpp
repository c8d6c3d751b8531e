// A tool's JSON result file parsed for a perf reader: invalid JSON, and a
// field of an unexpected type met while reading it, are input errors naming
// the file, never exceptions (nccl-tests -J and perftest --out_json alike).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "collectors/perf/perf_results.hpp"

namespace ccdiag::perf {

template <class Read>
Result<PerfRun> read_json_result(std::string_view text, const std::string& file, Read&& read) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    return make_error(std::string("invalid JSON: ") + e.what(), file);
  }
  try {
    return read(j);
  } catch (const nlohmann::json::exception& e) {
    return make_error(std::string("unexpected JSON field type: ") + e.what(), file);
  }
}

}  // namespace ccdiag::perf
