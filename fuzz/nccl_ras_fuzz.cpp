// Fuzzes the RAS STATUS parsers (text and JSON, incl. the NCCL 2.28 comma
// repair) and the findings derived from whatever they return.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collectors/nccl/ras_findings.hpp"
#include "collectors/nccl/ras_status.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto t = ccdiag::nccl::parse_ras_text(text);
  (void)ccdiag::nccl::ras_to_evidence(t, "fuzz", "host");
  auto j = ccdiag::nccl::parse_ras_json(text);
  (void)ccdiag::nccl::ras_to_evidence(j, "fuzz", "host");
  (void)ccdiag::nccl::normalise_comm_hash(text.substr(0, 24));
  return 0;
}
