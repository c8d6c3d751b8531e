// libFuzzer target for the log line parser and the whole log analyser: any
// bytes as a log (prefixes, ANSI, CR, truncated lines, NUL) must never crash,
// hang or leak, and the prefix views must stay inside the line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "collectors/logs/analyzer.hpp"
#include "collectors/logs/docker_json_log.hpp"
#include "ccdiag/line_prefix.hpp"
#include "collectors/logs/matcher.hpp"
#include "collectors/logs/reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ccdiag::logs;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Line by line: the prefix parser's views must point into the line.
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    const LinePrefix p = parse_line_prefix(line);
    if (!p.body.empty() && (p.body.data() < line.data() || p.body.data() + p.body.size() > line.data() + line.size()))
      __builtin_trap();
    std::string copy(line);
    strip_ansi(copy);
    (void)rank_from_filename(line);
    pos = nl + 1;
  }
  (void)looks_binary(text);
  // Docker's json-file decoding, in two blocks (an entry may end mid-line):
  // the decoded text is never longer than the entries plus a time and a
  // newline per line, and never grows without bound.
  if (looks_docker_json_log(text) || size % 2 == 0) {
    std::string out;
    bool at_start = true;
    const size_t cut = text.rfind('\n', text.size() / 2);
    const size_t first = cut == std::string_view::npos ? 0 : cut + 1;
    decode_docker_json_log(text.substr(0, first), out, at_start);
    decode_docker_json_log(text.substr(first), out, at_start);
    if (out.size() > 4 * text.size() + 64) __builtin_trap();
  }
  // The prefilter rewrite takes user patterns (--signatures): any bytes as a
  // pattern must give an expression no longer than the pattern, without crashing.
  const std::string pattern(text.substr(0, 512));
  if (prefilter_expression(pattern).size() > pattern.size()) __builtin_trap();
  // The analyser over the whole input, as one file (compiled once, reset per input).
  static auto analyzer = LogAnalyzer::create(builtin_signatures());
  if (!analyzer) __builtin_trap();
  (*analyzer)->add_text(text, "fuzz/rank3.log", "");
  (void)(*analyzer)->finish();
  (*analyzer)->reset();
  return 0;
}
