// A restricted pickle reader for PyTorch flight-recorder dumps (as
// torch/csrc/jit/serialization/pickler.cpp writes them). A dump is untrusted
// input: this reader builds only dict / list / tuple / str / bytes / int /
// float / bool / None and refuses every other opcode (GLOBAL, REDUCE, BUILD,
// NEWOBJ, persistent ids, ...) with an error naming the opcode and its offset.
// It never constructs objects, never calls anything, and is bounded:
//   - nesting depth (kMaxDepth), value count (max_nodes: every value pushed,
//     memo references included), MARK stack depth;
//   - every length is checked against the bytes left before anything is
//     allocated, so "huge length" headers fail instead of allocating;
//   - memo indices are bounded; a memo reference to a container is shared
//     (not copied), so self-references cannot blow up.
// Accepted: the protocol-2 subset torch::jit::Pickler writes, plus the
// protocol 2-5 basics Python's pickle.dump emits when users re-save dumps
// (FRAME, SHORT_BINUNICODE, BINUNICODE8, MEMOIZE, BINBYTES, SHORT_BINBYTES,
// EMPTY_TUPLE, TUPLE1/3, TUPLE, APPEND, SETITEM, LONG4, POP, POP_MARK, DUP).
//
// Layout, built for speed at 4,096 ranks x 2,000 entries (no allocation per
// value): a value is 16 bytes (PValue) with scalars inline; strings are
// (offset, length) views into the input, so the input must outlive the
// PickleDoc; containers live in one table and their items in one shared pool
// (PickleDoc::items), a container's items contiguous. Every string opcode
// gets an occurrence id (PValue::ref) that memo references repeat, so a
// decoder can cache per distinct string with a plain array instead of
// hashing the text (PyTorch memoises every key, name and dtype by value).
// Containers refer to children by value, so a cycle made through the memo is
// harmless to own and to free. Pure: no I/O.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/result.hpp"

namespace ccdiag::fr {

enum class PType : uint8_t { none, boolean, integer, floating, string, bytes, list, tuple, dict };

struct PValue {
  PType type = PType::none;
  uint32_t ref = 0;  // string/bytes: occurrence id (< PickleDoc::string_ids); list/tuple/dict: container index
  int64_t i = 0;     // boolean (0/1), integer; floating: the double's bits (d()); string/bytes: offset << 32 | length

  double d() const {
    double x;
    std::memcpy(&x, &i, sizeof x);
    return x;
  }
  bool is_container() const { return type == PType::list || type == PType::tuple || type == PType::dict; }
};
static_assert(sizeof(PValue) == 16);

struct PContainer {
  PType type = PType::list;
  uint16_t depth = 1;  // 1 + deepest child (scalars count 0)
  uint32_t first = 0;  // items[first, first + count): list/tuple items; dict: key, value, key, value...
  uint32_t count = 0;
  uint32_t cap = 0;    // slots reserved at `first` (grows by doubling when a container is appended to twice)
};

struct PickleDoc {
  std::string_view data;  // the input: strings point into it
  std::vector<PValue> items;
  std::vector<PContainer> containers;
  PValue root;
  uint32_t string_ids = 0;  // occurrence ids handed out (strings and bytes)

  std::span<const PValue> kids(const PValue& v) const {
    if (!v.is_container()) return {};
    const PContainer& c = containers[v.ref];
    return {items.data() + c.first, c.count};
  }
  std::string_view str(const PValue& v) const {
    if (v.type != PType::string && v.type != PType::bytes) return {};
    const auto u = static_cast<uint64_t>(v.i);
    return data.substr(static_cast<size_t>(u >> 32), static_cast<size_t>(u & 0xffffffffu));
  }
  // Dict lookup by string key (linear; dumps have ~20 keys per dict). Returns
  // nullptr when `dict` is not a dict or has no such key.
  const PValue* get(const PValue& dict, std::string_view key) const;
};

struct PickleLimits {
  size_t max_nodes = 64u << 20;   // 64 Mi values (1 GiB of PValues): a guard far above any real dump
  size_t max_mark_depth = 1u << 16;
  size_t max_memo = 1u << 24;
};

inline constexpr uint16_t kMaxDepth = 64;  // real dumps nest 5 deep

// Parses `data` as one pickle (at most 2^32 - 1 bytes: string offsets are 32
// bits). The error message names the offset and the opcode (or what was
// truncated); the caller adds the file name as context.
Result<PickleDoc> parse_pickle(std::string_view data, const PickleLimits& limits = {});

// The same into `doc`, reusing its buffers (cleared first). On error `doc`
// holds a partial parse and must not be read.
Status parse_pickle_into(std::string_view data, PickleDoc& doc, const PickleLimits& limits = {});

}  // namespace ccdiag::fr
