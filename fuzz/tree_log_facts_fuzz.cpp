// Fuzzes the decision tree's log-fact extractor and the whole decision on
// what it extracted: any bytes must give facts, findings and a verdict
// without crashing, hanging or throwing.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/tree/decision_tree.hpp"
#include "analysis/tree/log_facts.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ccdiag::EvidenceSet set;
  ccdiag::extract_log_facts(text, "fuzz.log", size % 2 ? "" : "node1", set);
  const auto report = ccdiag::decide(set);
  (void)report;
  return 0;
}
