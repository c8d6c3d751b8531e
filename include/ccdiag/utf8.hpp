// UTF-8 repair: the one place where text that came from outside (log lines,
// /proc, core dumps, dumps) is made valid before it is written as JSON.
//
// JSON output is a contract (docs/json.md): nlohmann::json throws on invalid
// UTF-8 when dumping, which used to turn a log line with a stray byte (or one
// that ccdiag itself cut inside an emoji) into exit 4. Everything that prints
// JSON goes through json_text(); everything that shortens text for display
// uses utf8_prefix() so a cut never splits a code point. In the model layer
// because both ends use it: the log reader cuts excerpts with utf8_prefix()
// and the renderers repair what they print.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ccdiag {

// Length of the longest prefix of s that is at most max_bytes long and does
// not end inside a UTF-8 sequence (only the cut point is checked).
size_t utf8_prefix_length(std::string_view s, size_t max_bytes);
inline std::string_view utf8_prefix(std::string_view s, size_t max_bytes) {
  return s.substr(0, utf8_prefix_length(s, max_bytes));
}

// s with every invalid or truncated sequence replaced by U+FFFD; a sequence
// cut at the very end of s (a truncated line) is dropped instead.
std::string repair_utf8(std::string_view s);
bool valid_utf8(std::string_view s);

// Appends code point c as UTF-8; a surrogate or a value past U+10FFFF (what a
// decoder of foreign text may produce) becomes U+FFFD.
void append_utf8(std::string& s, uint32_t c);

// Repairs every string (and object key) of j in place.
void repair_utf8(nlohmann::json& j);

// j as JSON text (indent as nlohmann's dump), never throwing on text.
std::string json_text(nlohmann::json j, int indent = 2);

}  // namespace ccdiag
