#include "ccdiag/utf8.hpp"

namespace ccdiag {

namespace {

// Length of the well-formed sequence starting at s[i] (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), 0 when invalid, or -1 when
// it is a valid start cut off by the end of s.
int sequence_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  int n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c >= 0xE1 && c <= 0xEC) n = 3;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c >= 0xEE && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  for (int k = 1; k < n; ++k) {
    if (i + k >= s.size()) return -1;
    const unsigned char x = b(i + k);
    if (x < (k == 1 ? lo : 0x80) || x > (k == 1 ? hi : 0xBF)) return 0;
  }
  return n;
}

}  // namespace

size_t utf8_prefix_length(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s.size();
  size_t n = max_bytes;
  // Back up over continuation bytes to the start of the sequence the cut is in.
  size_t back = 0;
  while (n > 0 && back < 3 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n, ++back;
  return n;
}

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const int n = sequence_length(s, i);
    if (n <= 0) return false;
    i += static_cast<size_t>(n);
  }
  return true;
}

std::string repair_utf8(std::string_view s) {
  if (valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    const int n = sequence_length(s, i);
    if (n > 0) {
      out.append(s.substr(i, static_cast<size_t>(n)));
      i += static_cast<size_t>(n);
    } else if (n < 0) {
      break;  // a code point cut by the end of the text: drop its start
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}

void repair_utf8(nlohmann::json& j) {
  if (j.is_string()) {
    auto& s = j.get_ref<std::string&>();
    if (!valid_utf8(s)) s = repair_utf8(s);
  } else if (j.is_array()) {
    for (auto& e : j) repair_utf8(e);
  } else if (j.is_object()) {
    bool bad_key = false;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!valid_utf8(it.key())) bad_key = true;
      repair_utf8(it.value());
    }
    if (bad_key) {
      nlohmann::json fixed = nlohmann::json::object();
      for (auto it = j.begin(); it != j.end(); ++it) fixed[repair_utf8(it.key())] = std::move(it.value());
      j = std::move(fixed);
    }
  }
}

std::string json_text(nlohmann::json j, int indent) {
  repair_utf8(j);
  // After the repair nothing is invalid; `replace` only guards the promise.
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

void append_utf8(std::string& s, uint32_t c) {
  if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xc0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 63));
  } else if (c < 0x10000) {
    s += static_cast<char>(0xe0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 63));
    s += static_cast<char>(0x80 | (c & 63));
  } else if (c < 0x110000) {
    s += static_cast<char>(0xf0 | (c >> 18));
    s += static_cast<char>(0x80 | ((c >> 12) & 63));
    s += static_cast<char>(0x80 | ((c >> 6) & 63));
    s += static_cast<char>(0x80 | (c & 63));
  } else {
    s += "\xef\xbf\xbd";
  }
}

}  // namespace ccdiag
