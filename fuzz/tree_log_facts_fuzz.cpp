// Fuzzes the decision tree's log-fact extractor and the whole decision on
// what it extracted: any bytes must give facts, findings and a verdict
// without crashing, hanging or throwing. And the line sieve must change
// nothing: the facts of a sieved read (every line without a check's literal
// skipped) are those of a line-by-line read, or the fuzzer stops here.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/tree/decision_tree.hpp"
#include "analysis/tree/log_facts.hpp"

namespace {
nlohmann::json as_json(const ccdiag::EvidenceSet& set) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& e : set.evidence) j.push_back(e);
  for (const auto& f : set.findings) j.push_back(f);
  return j;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string host = size % 2 ? "" : "node1";
  ccdiag::EvidenceSet sieved, plain;
  ccdiag::extract_log_facts(text, "fuzz.log", host, sieved, 0);
  ccdiag::extract_log_facts(text, "fuzz.log", host, plain, std::numeric_limits<size_t>::max());
  if (as_json(sieved) != as_json(plain)) std::abort();
  const auto report = ccdiag::decide(sieved);
  (void)report;
  return 0;
}
