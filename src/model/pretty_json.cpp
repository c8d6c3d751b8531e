#include "ccdiag/pretty_json.hpp"

#include <charconv>

#include "ccdiag/utf8.hpp"

namespace ccdiag {

void PrettyJson::newline_indent(size_t depth) {
  out_ += '\n';
  out_.append(depth * static_cast<size_t>(indent_), ' ');
}

// A value inside a container goes on its own line after a comma (or after
// the opening bracket); a member's value follows its key on the same line.
void PrettyJson::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (empty_.empty()) return;
  if (!empty_.back()) out_ += ',';
  empty_.back() = false;
  newline_indent(empty_.size());
}

void PrettyJson::open(char bracket) {
  before_value();
  out_ += bracket;
  empty_.push_back(true);
}

void PrettyJson::close(char bracket) {
  const bool was_empty = empty_.back();
  empty_.pop_back();
  if (!was_empty) newline_indent(empty_.size());
  out_ += bracket;
}

void PrettyJson::key(std::string_view k) {
  before_value();
  escaped(k);
  out_ += ": ";
  after_key_ = true;
}

void PrettyJson::string(std::string_view s) {
  before_value();
  escaped(s);
}

void PrettyJson::integer(int64_t v) {
  before_value();
  char buf[24];
  out_.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

void PrettyJson::unsigned_integer(uint64_t v) {
  before_value();
  char buf[24];
  out_.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

void PrettyJson::number(double v) {
  before_value();
  out_ += nlohmann::json(v).dump();  // its shortest form ("2.5", "1.0", "1e-05"), null when not finite
}

void PrettyJson::boolean(bool v) {
  before_value();
  out_ += v ? "true" : "false";
}

void PrettyJson::null() {
  before_value();
  out_ += "null";
}

void PrettyJson::value(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object:
      for (auto it = j.begin(); it != j.end(); ++it)
        if (!valid_utf8(it.key())) {
          // Repaired keys sort (and may collide) anew: as json_text, on a copy.
          nlohmann::json fixed = j;
          repair_utf8(fixed);
          value(fixed);
          return;
        }
      begin_object();
      for (auto it = j.begin(); it != j.end(); ++it) {
        key(it.key());
        value(it.value());
      }
      end_object();
      return;
    case nlohmann::json::value_t::array:
      begin_array();
      for (const auto& e : j) value(e);
      end_array();
      return;
    case nlohmann::json::value_t::string:
      string(j.get_ref<const std::string&>());
      return;
    case nlohmann::json::value_t::number_integer:
      integer(j.get<int64_t>());
      return;
    case nlohmann::json::value_t::number_unsigned:
      unsigned_integer(j.get<uint64_t>());
      return;
    case nlohmann::json::value_t::number_float:
      number(j.get<double>());
      return;
    case nlohmann::json::value_t::boolean:
      boolean(j.get<bool>());
      return;
    default:
      // null, and what no ccdiag output holds (discarded, binary) as dump's text.
      before_value();
      out_ += j.dump();
      return;
  }
}

// As nlohmann's dump_escaped with ensure_ascii off, after repair_utf8: the
// two-character escapes, \u00xx (lower-case hex) for the other control
// characters, everything else (UTF-8 included) as it is.
void PrettyJson::escaped(std::string_view raw) {
  std::string repaired;
  if (!valid_utf8(raw)) {
    repaired = repair_utf8(raw);
    raw = repaired;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  out_ += '"';
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < raw.size(); ++i) {
    const auto c = static_cast<unsigned char>(raw[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out_.append(raw.substr(run, i - run));
    run = i + 1;
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\b':
        out_ += "\\b";
        break;
      case '\t':
        out_ += "\\t";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\f':
        out_ += "\\f";
        break;
      case '\r':
        out_ += "\\r";
        break;
      default:
        out_ += "\\u00";
        out_ += kHex[c >> 4];
        out_ += kHex[c & 15];
    }
  }
  out_.append(raw.substr(run));
  out_ += '"';
}

}  // namespace ccdiag
