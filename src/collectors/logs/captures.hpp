// The named fields of one matched log line, before they become JSON.
//
// Most matched lines only bump a count (the same signature and actor again)
// or feed the per-process topology, so the analyser keeps captures as views
// into the line and builds nlohmann::json only when a finding is created.
// Values are typed as the JSON will be: a capture of 1..18 ASCII digits
// (optionally negative) is an integer unless its name is one of the
// identifiers that stay strings (bus ids, versions, hashes, ...).
//
// Ownership: views point into the line being analysed (valid until the next
// line) or into strings the Captures owns (values from dedicated parsers).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccdiag::logs {

// Whether a capture named `name` stays a string even when all digits.
bool keep_as_string(std::string_view name);

// The JSON value of a capture: an integer when !as_string and `v` parses
// whole as a 64-bit integer of at most 18 characters, else the text.
nlohmann::json typed_value(bool as_string, std::string_view v);

// A capture name, resolved once per signature (the analyser keeps these).
struct CaptureName {
  std::string name;
  bool as_string = false;
};

class Captures {
 public:
  // Views in entries_ point into owned_'s strings: a copy would keep pointing
  // into the original (freed with it). Moves keep them valid (a moved deque
  // keeps its elements where they are), so Captures is move-only.
  Captures() = default;
  Captures(const Captures&) = delete;
  Captures& operator=(const Captures&) = delete;
  Captures(Captures&&) = default;
  Captures& operator=(Captures&&) = default;

  void clear();
  // `value` must outlive the Captures' use (a view into the current line).
  void add(const CaptureName* name, std::string_view value);
  // Copies `value` (dedicated parsers build their own strings).
  void add_owned(std::string name, bool as_string, std::string value);
  // An integer field from a dedicated parser (any int64, unlike parsed text).
  void add_owned(std::string name, int64_t value);
  bool empty() const { return entries_.empty(); }

  bool has(std::string_view name) const { return find(name) != nullptr; }
  // The field when it is (typed as) an integer.
  std::optional<int64_t> integer(std::string_view name) const;
  // The field when it is (typed as) a string.
  std::optional<std::string_view> string(std::string_view name) const;
  // As JSON would print it: the string, or the integer in decimal; "" when absent.
  std::string text(std::string_view name) const;
  // text(name) appended to `out` (no temporary string).
  void append_text(std::string& out, std::string_view name) const;
  // The typed JSON value; null when absent.
  nlohmann::json value(std::string_view name) const;
  nlohmann::json to_json() const;

 private:
  struct Entry {
    std::string_view name;
    bool as_string;
    std::string_view value;
    std::optional<int64_t> number;  // set for add_owned(name, int64_t)
  };
  const Entry* find(std::string_view name) const;
  static std::optional<int64_t> as_integer(const Entry& e);
  std::vector<Entry> entries_;
  std::deque<std::string> owned_;  // names and values of add_owned (stable addresses)
};

}  // namespace ccdiag::logs
