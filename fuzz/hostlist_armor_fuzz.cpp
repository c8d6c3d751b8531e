// Fuzzes the fleet parsers: host list grammar, host files, the armoured
// bundle-stream decoder and the launcher line labels. None may crash, hang
// or allocate without bound on any input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "bundle/armor.hpp"
#include "fleet/hostlist.hpp"
#include "fleet/launchers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  (void)ccdiag::expand_hostlist(in);
  (void)ccdiag::expand_hostlist_lines(in);
  size_t total = 0;
  ccdiag::ArmorDecoder dec([&](std::string_view b) {
    total += b.size();
    return true;
  });
  size_t pos = 0;
  while (pos <= in.size()) {
    const size_t nl = in.find('\n', pos);
    const std::string_view line = in.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    std::string_view host, text;
    if (ccdiag::split_host_label(line, host, text)) dec.feed_line(text);
    else dec.feed_line(line);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  (void)dec.end_problem();
  return 0;
}
