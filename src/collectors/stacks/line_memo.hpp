// LineMemo: the file:line answers already looked up in one object, by
// object-relative address, negative answers included. Cached per build-id
// (sys/object_cache.hpp) so that a warm capture of a rank stuck at the same
// PCs loads no DWARF at all; a PC not in the memo is looked up in DWARF
// (libdwfl) and the memo is rewritten with it. Only PCs of frames shown are
// ever looked up: nothing is precomputed for the whole object.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "ccdiag/result.hpp"

namespace ccdiag {

struct FileLine {
  std::string file;
  int line = 0;
  bool operator==(const FileLine& o) const { return file == o.file && line == o.line; }
};

class LineMemo {
 public:
  static constexpr uint32_t kVersion = 1;
  // Bounds one entry: a memo never grows past this many PCs (older ones kept).
  static constexpr size_t kMaxPcs = 65536;

  // nullopt: never looked up; an empty optional inside: looked up, no line.
  std::optional<std::optional<FileLine>> find(uint64_t rel_pc) const;
  // Records an answer; false when the memo is full (the answer is not kept).
  bool put(uint64_t rel_pc, std::optional<FileLine> answer);
  bool changed() const { return changed_; }
  size_t size() const { return pcs_.size(); }

  std::string serialize() const;
  // Validates every offset; an Error on any flaw.
  static Result<LineMemo> parse(std::string_view payload);

 private:
  std::map<uint64_t, std::optional<FileLine>> pcs_;
  bool changed_ = false;
};

}  // namespace ccdiag
