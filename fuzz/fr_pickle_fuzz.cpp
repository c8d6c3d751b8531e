// Fuzzes the flight-recorder reader: the restricted pickle parser, the JSON
// path, the decoder into compact records, and the cross-rank analysis over
// what decoded (as two ranks of one job), and the per-rank progress evidence
// the fleet picture reads. Nothing may crash, hang, leak or
// allocate without bound, whatever the bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/cross_rank/fr_analysis.hpp"
#include "collectors/fr/dump.hpp"
#include "collectors/fr/pickle_reader.hpp"
#include "collectors/fr/progress.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ccdiag::fr::PickleLimits small;
  small.max_nodes = 1u << 20;  // keep each run fast; the default is a 4 GB guard
  (void)ccdiag::fr::parse_pickle(bytes, small);
  auto d = ccdiag::fr::decode_dump_bytes(bytes, "fuzz");
  if (d.ok() && d->entries.size() < 5000) {
    (void)ccdiag::fr::rank_progress(d.value());
    std::vector<ccdiag::fr::RankDump> dumps;
    dumps.push_back(d.value());
    dumps.back().rank = 0;
    dumps.push_back(std::move(d.value()));
    dumps.back().rank = 1;
    (void)ccdiag::fr::analyze_fr(dumps);
  }
  return 0;
}
