// A restricted pickle reader for PyTorch flight-recorder dumps
// (reference flight_recorder.md §1.6). A dump is untrusted input: this reader
// builds only dict / list / tuple / str / bytes / int / float / bool / None
// and refuses every other opcode (GLOBAL, REDUCE, BUILD, NEWOBJ, persistent
// ids, ...) with an error naming the opcode and its offset. It never
// constructs objects, never calls anything, and is bounded:
//   - nesting depth (kMaxDepth), node count (max_nodes), MARK stack depth;
//   - every length is checked against the bytes left before anything is
//     allocated, so "huge length" headers fail instead of allocating;
//   - memo indices are bounded; a memo reference to a container is shared
//     (not copied), so self-references cannot blow up.
// Accepted: the protocol-2 subset torch::jit::Pickler writes, plus the
// protocol 2-5 basics Python's pickle.dump emits when users re-save dumps
// (FRAME, SHORT_BINUNICODE, BINUNICODE8, MEMOIZE, BINBYTES, SHORT_BINBYTES,
// EMPTY_TUPLE, TUPLE1/3, TUPLE, APPEND, SETITEM, LONG4, POP, POP_MARK, DUP).
//
// The result is an arena (PickleDoc): nodes refer to children by index, so a
// cycle made through the memo is harmless to own and to free. Strings are
// views into the input bytes: the input must outlive the PickleDoc. Pure: no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/result.hpp"

namespace ccdiag::fr {

enum class PType : uint8_t { none, boolean, integer, floating, string, bytes, list, tuple, dict };

struct PNode {
  PType type = PType::none;
  int64_t i = 0;                // boolean (0/1) and integer
  double d = 0.0;               // floating
  std::string_view s;           // string (UTF-8 as written) and bytes: a view into the input
  std::vector<uint32_t> kids;   // list/tuple items; dict: key, value, key, value...
  uint16_t depth = 0;           // 0 for scalars; 1 + deepest child for containers
};

struct PickleDoc {
  std::vector<PNode> nodes;
  uint32_t root = 0;

  const PNode& at(uint32_t i) const { return nodes[i]; }
  // Dict lookup by string key (linear; dumps have ~20 keys per dict). Returns
  // nullptr when `dict` is not a dict or has no such key.
  const PNode* get(const PNode& dict, std::string_view key) const;
};

struct PickleLimits {
  size_t max_nodes = 64u << 20;   // 64 Mi nodes: a 4 GB-RSS guard far above any real dump
  size_t max_mark_depth = 1u << 16;
  size_t max_memo = 1u << 24;
};

inline constexpr uint16_t kMaxDepth = 64;  // real dumps nest 5 deep

// Parses `data` as one pickle. The error message names the offset and the
// opcode (or what was truncated); the caller adds the file name as context.
Result<PickleDoc> parse_pickle(std::string_view data, const PickleLimits& limits = {});

}  // namespace ccdiag::fr
