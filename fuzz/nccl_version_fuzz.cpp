// Fuzzes parse_nccl_version_string() (text from library images, core files and
// logs) and the table lookups fed by what it returns.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "collectors/nccl/attach/layout.hpp"

namespace na = ccdiag::nccl::attach;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto v = na::parse_nccl_version_string(text);
  if (!v) return 0;
  // Components are bounded (at most 4 digits) and survive a round trip.
  if (v->major < 0 || v->major > 9999 || v->minor < 0 || v->minor > 9999 || v->patch < 0 || v->patch > 9999) abort();
  if ((v->cuda_major < 0) != (v->cuda_minor < 0)) abort();
  auto again = na::parse_nccl_version_string("NCCL version " + v->str());
  if (!again || again->code() != v->code()) abort();
  // Lookups never crash and only return a row that lists the version.
  if (auto row = na::table_layout(*v)) {
    bool listed = false;
    for (const auto& s : row->versions) listed |= s == v->str();
    if (!listed) abort();
  }
  (void)na::layouts_for_comm_size(v->code());
  return 0;
}
