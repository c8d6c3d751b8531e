// Fuzzes the flight-recorder file reader and the cross-rank analysis. The
// input is split in two "ranks" so the analysis sees several snapshots; a
// valid header is stamped on each half so the fuzzer reaches the body.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "../tools/nccl-profiler-plugin/ccdiag_fr_layout.h"
#include "collectors/nccl/flight_analysis.hpp"
#include "collectors/nccl/flight_recorder.hpp"
#include "collectors/nccl/nccl_artifacts.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string raw(reinterpret_cast<const char*>(data), size);
  (void)ccdiag::nccl::parse_flight_file(raw, "fuzz");  // as is: mostly rejected
  std::string decoded;
  (void)ccdiag::nccl::base64_decode(raw, decoded);
  std::vector<ccdiag::nccl::FrSnapshot> snaps;
  for (int half = 0; half < 2; ++half) {
    std::string buf(sizeof(ccdiag_fr_file), '\0');
    const size_t take = std::min(size / 2, buf.size());
    std::memcpy(buf.data(), data + half * (size / 2), take);
    ccdiag_fr_header h;
    std::memcpy(&h, buf.data(), sizeof(h));
    h.magic = CCDIAG_FR_MAGIC;
    h.layout_version = CCDIAG_FR_LAYOUT_VERSION;
    h.file_size = sizeof(ccdiag_fr_file);
    h.ring_size = CCDIAG_FR_RING_SIZE;
    h.max_channels = CCDIAG_FR_MAX_CHANNELS;
    h.nranks = h.nranks % 9;
    h.rank = h.rank % 9;
    std::memcpy(buf.data(), &h, sizeof(h));
    auto s = ccdiag::nccl::parse_flight_file(buf, "fuzz");
    if (s) snaps.push_back(std::move(*s));
  }
  auto a = ccdiag::nccl::analyze_flight(snaps, 1780000000ull * 1000000000ull, 1.0);
  (void)ccdiag::nccl::flight_findings(a, "fuzz");
  for (const auto& x : a) (void)ccdiag::nccl::to_json(x);
  return 0;
}
