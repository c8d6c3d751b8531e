#include "collectors/logs/docker_json_log.hpp"

#include <cstdint>

#include "ccdiag/utf8.hpp"

namespace ccdiag::logs {

namespace {

constexpr std::string_view kEntryStart = "{\"log\":\"";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool read_hex4(std::string_view s, size_t i, uint32_t& out) {
  if (i + 4 > s.size()) return false;
  out = 0;
  for (size_t k = i; k < i + 4; ++k) {
    const int v = hex_value(s[k]);
    if (v < 0) return false;
    out = out * 16 + static_cast<uint32_t>(v);
  }
  return true;
}

// Decodes the JSON string starting at s[i] (just after its opening quote)
// into `out`; returns the index after the closing quote, or npos when the
// string is not closed on this line.
size_t decode_string(std::string_view s, size_t i, std::string& out) {
  while (i < s.size()) {
    const char c = s[i];
    if (c == '"') return i + 1;
    if (c != '\\') {
      out += c;
      ++i;
      continue;
    }
    if (i + 1 >= s.size()) return std::string_view::npos;
    const char e = s[i + 1];
    i += 2;
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        uint32_t cp = 0;
        if (!read_hex4(s, i, cp)) {
          out += "\\u";
          break;
        }
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo = 0;
          if (i + 6 <= s.size() && s[i] == '\\' && s[i + 1] == 'u' && read_hex4(s, i + 2, lo) && lo >= 0xDC00 &&
              lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
          } else {
            cp = 0xFFFD;  // a lone high surrogate
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        append_utf8(out, cp);
        break;
      }
      default: out += e; break;  // \" \\ \/
    }
  }
  return std::string_view::npos;
}

// The value of "time" after the log string: "<RFC 3339>" (empty when absent).
std::string_view time_field(std::string_view rest) {
  constexpr std::string_view key = "\"time\":\"";
  const size_t at = rest.find(key);
  if (at == std::string_view::npos) return {};
  const size_t b = at + key.size();
  const size_t e = rest.find('"', b);
  if (e == std::string_view::npos || e - b > 40) return {};
  return rest.substr(b, e - b);
}

}  // namespace

bool looks_docker_json_log(std::string_view head) {
  size_t i = 0;
  while (i < head.size() && (head[i] == '\n' || head[i] == '\r' || head[i] == ' ')) ++i;
  head.remove_prefix(i);
  if (head.substr(0, kEntryStart.size()) != kEntryStart) return false;
  const std::string_view first = head.substr(0, head.find('\n'));
  return first.find("\"stream\":\"") != std::string_view::npos || first.find("\"time\":\"") != std::string_view::npos;
}

void decode_docker_json_log(std::string_view block, std::string& out, bool& at_line_start) {
  std::string text;
  size_t pos = 0;
  while (pos < block.size()) {
    size_t nl = block.find('\n', pos);
    const bool has_nl = nl != std::string_view::npos;
    if (!has_nl) nl = block.size();
    std::string_view line = block.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    text.clear();
    const size_t end = line.substr(0, kEntryStart.size()) == kEntryStart
                           ? decode_string(line, kEntryStart.size(), text)
                           : std::string_view::npos;
    if (end == std::string_view::npos) {
      // Not an entry (a truncated last line, text appended by hand): as is.
      if (!at_line_start) out += '\n';
      out.append(line);
      out += '\n';
      at_line_start = true;
      continue;
    }
    const std::string_view time = time_field(line.substr(end));
    // One entry may hold one line (the usual case) or a piece of a long one.
    size_t b = 0;
    while (b < text.size()) {
      const size_t e = text.find('\n', b);
      if (at_line_start && !time.empty()) {
        out.append(time);
        out += ' ';
      }
      if (e == std::string::npos) {
        out.append(text, b, std::string::npos);
        at_line_start = false;
        break;
      }
      out.append(text, b, e - b + 1);
      at_line_start = true;
      b = e + 1;
    }
  }
}

}  // namespace ccdiag::logs
