// JSON text written straight from typed values, byte for byte what
// json_text() (nlohmann's dump after repair_utf8) prints for the same tree.
//
// Building a nlohmann tree only to dump it costs an allocation per value: a
// 100-thread stack capture is ~6,000 values, and tree plus dump were 2 ms of
// a 14 ms `ccdiag stacks`. Writers that use this emit object keys in sorted
// order, as nlohmann's std::map-backed objects do.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccdiag {

class PrettyJson {
 public:
  explicit PrettyJson(std::string& out, int indent = 2) : out_(out), indent_(indent) {}

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  // The next value is this member's; keys must come in sorted order.
  void key(std::string_view k);

  void string(std::string_view s);
  void integer(int64_t v);
  void unsigned_integer(uint64_t v);
  void number(double v);  // as nlohmann prints a double
  void boolean(bool v);
  void null();
  // Any tree, as json_text would print it at this depth.
  void value(const nlohmann::json& j);

 private:
  void open(char bracket);
  void close(char bracket);
  void before_value();
  void newline_indent(size_t depth);
  void escaped(std::string_view s);

  std::string& out_;
  int indent_;
  std::vector<bool> empty_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

}  // namespace ccdiag
