// Fuzzes the GPU evidence judges with arbitrary bundle JSON (evidence.json is
// user input: hand-edited, truncated, from another version) and the BDF
// normaliser with arbitrary text. gpu_findings must never throw or crash.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

#include "collectors/gpu/gpu_findings.hpp"
#include "collectors/gpu/gpu_names.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ccdiag::gpu::normalize_bdf(text);
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return 0;
  std::vector<ccdiag::Evidence> evidence;
  for (const auto& item : j) {
    // Shape errors of the envelope are the bundle reader's to report; the data
    // payload of a well-formed envelope is what the judges must survive.
    try {
      evidence.push_back(item.get<ccdiag::Evidence>());
    } catch (const std::exception&) {
    }
  }
  (void)ccdiag::gpu_findings(evidence);
  return 0;
}
