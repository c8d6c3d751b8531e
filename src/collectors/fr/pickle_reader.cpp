#include "collectors/fr/pickle_reader.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>

namespace ccdiag::fr {

const PValue* PickleDoc::get(const PValue& dict, std::string_view key) const {
  if (dict.type != PType::dict) return nullptr;
  const auto kv = kids(dict);
  for (size_t k = 0; k + 1 < kv.size(); k += 2)
    if (kv[k].type == PType::string && str(kv[k]) == key) return &kv[k + 1];
  return nullptr;
}

namespace {

// Names of opcodes we refuse, so the error says what the dump tried to do.
const char* opcode_name(uint8_t op) {
  switch (op) {
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'R': return "REDUCE";
    case 'b': return "BUILD";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 0x82: case 0x83: case 0x84: return "EXT";
    case 'I': return "INT";
    case 'L': return "LONG";
    case 'F': return "FLOAT";
    case 'S': return "STRING";
    case 'T': return "BINSTRING";
    case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE";
    case 'p': return "PUT";
    case 'g': return "GET";
    case 'd': return "DICT";
    case 'l': return "LIST";
    case 0x8e: return "BINBYTES8";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: return "unknown opcode";
  }
}

class Parser {
 public:
  // `doc` is cleared; its buffers' capacity is reused (a loader thread parses
  // thousands of dumps into one PickleDoc without touching fresh pages).
  Parser(std::string_view data, const PickleLimits& lim, PickleDoc& doc) : p_(data), lim_(lim), doc_(doc) {
    doc_.data = data;
    doc_.items.clear();
    doc_.containers.clear();
    doc_.root = PValue{};
    doc_.string_ids = 0;
  }

  Status run() {
    if (p_.empty()) return fail("empty file: not a pickle");
    if (p_.size() > 0xffffffffu) return fail("larger than 4 GiB: not a flight-recorder dump");
    // A dump has roughly one value per 8 bytes; reserving avoids regrowth.
    doc_.items.reserve(std::min(lim_.max_nodes, p_.size() / 8 + 16));
    stack_.reserve(256);
    while (true) {
      if (pos_ >= p_.size()) return fail("truncated: no STOP opcode before the end of the data");
      const size_t at = pos_;
      const uint8_t op = static_cast<uint8_t>(p_[pos_++]);
      std::optional<Error> err = step(op, at);
      if (err) return *err;
      if (done_) break;
    }
    if (stack_.size() != 1 || !marks_.empty()) return fail("malformed: STOP with an unbalanced stack");
    doc_.root = stack_.back();
    return Ok{};
  }

 private:
  std::string_view p_;
  const PickleLimits& lim_;
  size_t pos_ = 0;
  bool done_ = false;
  size_t pushed_ = 0;  // every value pushed (memo references included): the max_nodes guard
  PickleDoc& doc_;
  std::vector<PValue> stack_;
  std::vector<size_t> marks_;
  // Memo: index -> slot in memo_vals_ (4 bytes per index, as sparse hostile
  // indices up to max_memo stay cheap); kUnset when absent.
  std::vector<uint32_t> memo_;
  std::vector<PValue> memo_vals_;
  static constexpr uint32_t kUnset = 0xffffffffu;

  Error fail(std::string what) const { return make_error(std::move(what)); }
  Error fail_at(size_t at, const std::string& what) const { return make_error(fmt::format("offset {}: {}", at, what)); }

  bool need(size_t n) const { return p_.size() - pos_ >= n; }
  uint64_t le(size_t n) {
    uint64_t v = 0;
    for (size_t k = 0; k < n; ++k) v |= static_cast<uint64_t>(static_cast<uint8_t>(p_[pos_ + k])) << (8 * k);
    pos_ += n;
    return v;
  }

  std::optional<Error> push(PValue v, size_t at) {
    if (++pushed_ > lim_.max_nodes) return fail_at(at, "too many values (node limit reached)");
    stack_.push_back(v);
    return std::nullopt;
  }
  std::optional<Error> push_scalar(PType t, int64_t i, size_t at) {
    PValue v;
    v.type = t;
    v.i = i;
    return push(v, at);
  }
  std::optional<Error> push_container(PType t, size_t at) {
    PValue v;
    v.type = t;
    v.ref = static_cast<uint32_t>(doc_.containers.size());
    if (auto e = push(v, at)) return e;
    PContainer c;
    c.type = t;
    doc_.containers.push_back(c);
    return std::nullopt;
  }
  std::optional<Error> push_text(PType t, size_t len, size_t at) {
    if (!need(len)) return fail_at(at, fmt::format("truncated: string of {} bytes, {} left", len, p_.size() - pos_));
    PValue v;
    v.type = t;
    v.ref = doc_.string_ids++;
    v.i = static_cast<int64_t>((static_cast<uint64_t>(pos_) << 32) | static_cast<uint64_t>(len));
    pos_ += len;
    return push(v, at);
  }
  std::optional<Error> memo_put(uint64_t idx, size_t at) {
    if (stack_.empty()) return fail_at(at, "memo put on an empty stack");
    if (idx >= lim_.max_memo) return fail_at(at, fmt::format("memo index {} too large", idx));
    if (memo_.size() <= idx) memo_.resize(idx + 1, kUnset);
    if (memo_[idx] == kUnset) {
      memo_[idx] = static_cast<uint32_t>(memo_vals_.size());
      memo_vals_.push_back(stack_.back());
    } else {
      memo_vals_[memo_[idx]] = stack_.back();
    }
    return std::nullopt;
  }
  std::optional<Error> memo_get(uint64_t idx, size_t at) {
    if (idx >= memo_.size() || memo_[idx] == kUnset) return fail_at(at, fmt::format("memo index {} not defined", idx));
    return push(memo_vals_[memo_[idx]], at);
  }
  // Items above the top mark, popping the mark.
  std::optional<Error> pop_mark(size_t at, size_t& from) {
    if (marks_.empty()) return fail_at(at, "no MARK for this opcode");
    from = marks_.back();
    marks_.pop_back();
    if (from > stack_.size()) return fail_at(at, "MARK above the stack");
    return std::nullopt;
  }
  uint16_t depth_of(const PValue& v) const { return v.is_container() ? doc_.containers[v.ref].depth : 0; }
  // Appends stack_[from, from + n) to container `id`. Items stay contiguous:
  // a container closed last is at the end of the pool and grows in place;
  // one appended to again later (Python batches 1,000 items per APPENDS)
  // moves to the end with doubled room, so the total copying stays linear.
  std::optional<Error> append_items(uint32_t id, size_t from, size_t n, size_t at) {
    if (n == 0) return std::nullopt;
    uint16_t depth = doc_.containers[id].depth;
    for (size_t k = 0; k < n; ++k) {
      const uint16_t d = static_cast<uint16_t>(depth_of(stack_[from + k]) + 1);
      if (d > kMaxDepth) return fail_at(at, fmt::format("nesting deeper than {}", kMaxDepth));
      if (d > depth) depth = d;
    }
    auto& items = doc_.items;
    PContainer& c = doc_.containers[id];
    c.depth = depth;
    if (c.cap == 0) c.first = static_cast<uint32_t>(items.size());
    const auto src = stack_.begin() + static_cast<ptrdiff_t>(from);
    if (size_t{c.first} + c.count == items.size() && c.count == c.cap) {
      // The common case (every container of a torch dump): filled once, at the end of the pool.
      if (items.size() + n >= 0xffffffffu || items.size() + n > size_t{3} * lim_.max_nodes + 16)
        return fail_at(at, "too many values (node limit reached)");
      items.insert(items.end(), src, src + static_cast<ptrdiff_t>(n));
      c.count = c.cap = static_cast<uint32_t>(size_t{c.count} + n);
      return std::nullopt;
    }
    const size_t want = size_t{c.count} + n;
    if (want > c.cap) {
      const bool at_tail = size_t{c.first} + c.cap == items.size();
      const size_t cap = at_tail ? want : std::max(want, size_t{2} * c.cap);
      const size_t first = at_tail ? c.first : items.size();
      if (first + cap >= 0xffffffffu || first + cap > size_t{3} * lim_.max_nodes + 16)
        return fail_at(at, "too many values (node limit reached)");
      items.resize(first + cap);
      if (!at_tail) std::copy_n(items.begin() + c.first, c.count, items.begin() + static_cast<ptrdiff_t>(first));
      c.first = static_cast<uint32_t>(first);
      c.cap = static_cast<uint32_t>(cap);
    }
    std::copy_n(src, n, items.begin() + c.first + c.count);
    c.count = static_cast<uint32_t>(want);
    return std::nullopt;
  }
  std::optional<Error> make_tuple(size_t from, size_t at) {
    const auto id = static_cast<uint32_t>(doc_.containers.size());
    PContainer c;
    c.type = PType::tuple;
    doc_.containers.push_back(c);
    if (auto e = append_items(id, from, stack_.size() - from, at)) return e;
    stack_.resize(from);
    PValue v;
    v.type = PType::tuple;
    v.ref = id;
    return push(v, at);
  }
  // Depth check against the MARK stack and the value stack.
  std::optional<Error> check_stack(size_t at) {
    if (marks_.size() > lim_.max_mark_depth) return fail_at(at, "too many nested MARKs");
    return std::nullopt;
  }

  std::optional<Error> step(uint8_t op, size_t at) {
    switch (op) {
      case 0x80:  // PROTO
        if (!need(1)) return fail_at(at, "truncated PROTO");
        if (static_cast<uint8_t>(p_[pos_]) > 5) return fail_at(at, fmt::format("pickle protocol {} not supported", static_cast<int>(static_cast<uint8_t>(p_[pos_]))));
        ++pos_;
        return std::nullopt;
      case 0x95:  // FRAME (protocol 4): a length hint only
        if (!need(8)) return fail_at(at, "truncated FRAME");
        pos_ += 8;
        return std::nullopt;
      case '.':  // STOP
        done_ = true;
        return std::nullopt;
      case '}': return push_container(PType::dict, at);
      case ']': return push_container(PType::list, at);
      case ')': return push_container(PType::tuple, at);
      case '(':
        marks_.push_back(stack_.size());
        return check_stack(at);
      case '0':  // POP
        if (stack_.empty()) return fail_at(at, "POP on an empty stack");
        stack_.pop_back();
        return std::nullopt;
      case '1': {  // POP_MARK
        size_t from = 0;
        if (auto e = pop_mark(at, from)) return e;
        stack_.resize(from);
        return std::nullopt;
      }
      case '2':  // DUP
        if (stack_.empty()) return fail_at(at, "DUP on an empty stack");
        return push(stack_.back(), at);
      case 'u': {  // SETITEMS
        size_t from = 0;
        if (auto e = pop_mark(at, from)) return e;
        if (from == 0) return fail_at(at, "SETITEMS without a dict");
        if ((stack_.size() - from) % 2 != 0) return fail_at(at, "SETITEMS with an odd number of items");
        const PValue d = stack_[from - 1];
        if (d.type != PType::dict) return fail_at(at, "SETITEMS on a non-dict");
        if (auto e = append_items(d.ref, from, stack_.size() - from, at)) return e;
        stack_.resize(from);
        return std::nullopt;
      }
      case 's': {  // SETITEM
        if (stack_.size() < 3) return fail_at(at, "SETITEM with too few items");
        const PValue d = stack_[stack_.size() - 3];
        if (d.type != PType::dict) return fail_at(at, "SETITEM on a non-dict");
        if (!marks_.empty() && marks_.back() > stack_.size() - 3) return fail_at(at, "SETITEM across a MARK");
        if (auto e = append_items(d.ref, stack_.size() - 2, 2, at)) return e;
        stack_.resize(stack_.size() - 2);
        return std::nullopt;
      }
      case 'e': {  // APPENDS
        size_t from = 0;
        if (auto e = pop_mark(at, from)) return e;
        if (from == 0) return fail_at(at, "APPENDS without a list");
        const PValue l = stack_[from - 1];
        if (l.type != PType::list) return fail_at(at, "APPENDS on a non-list");
        if (auto e = append_items(l.ref, from, stack_.size() - from, at)) return e;
        stack_.resize(from);
        return std::nullopt;
      }
      case 'a': {  // APPEND
        if (stack_.size() < 2) return fail_at(at, "APPEND with too few items");
        const PValue l = stack_[stack_.size() - 2];
        if (l.type != PType::list) return fail_at(at, "APPEND on a non-list");
        if (!marks_.empty() && marks_.back() > stack_.size() - 2) return fail_at(at, "APPEND across a MARK");
        if (auto e = append_items(l.ref, stack_.size() - 1, 1, at)) return e;
        stack_.pop_back();
        return std::nullopt;
      }
      case 't': {  // TUPLE
        size_t from = 0;
        if (auto e = pop_mark(at, from)) return e;
        return make_tuple(from, at);
      }
      case 0x85: case 0x86: case 0x87: {  // TUPLE1..3
        const size_t n = op - 0x84u;
        if (stack_.size() < n) return fail_at(at, "TUPLE with too few items");
        if (!marks_.empty() && marks_.back() > stack_.size() - n) return fail_at(at, "TUPLE across a MARK");
        return make_tuple(stack_.size() - n, at);
      }
      case 'X':  // BINUNICODE
        if (!need(4)) return fail_at(at, "truncated BINUNICODE length");
        return push_text(PType::string, le(4), at);
      case 0x8c:  // SHORT_BINUNICODE
        if (!need(1)) return fail_at(at, "truncated SHORT_BINUNICODE length");
        return push_text(PType::string, le(1), at);
      case 0x8d: {  // BINUNICODE8
        if (!need(8)) return fail_at(at, "truncated BINUNICODE8 length");
        const uint64_t n = le(8);
        if (n > p_.size()) return fail_at(at, fmt::format("string length {} exceeds the data", n));
        return push_text(PType::string, static_cast<size_t>(n), at);
      }
      case 'B':  // BINBYTES
        if (!need(4)) return fail_at(at, "truncated BINBYTES length");
        return push_text(PType::bytes, le(4), at);
      case 'C':  // SHORT_BINBYTES
        if (!need(1)) return fail_at(at, "truncated SHORT_BINBYTES length");
        return push_text(PType::bytes, le(1), at);
      case 'q':  // BINPUT
        if (!need(1)) return fail_at(at, "truncated BINPUT");
        return memo_put(le(1), at);
      case 'r':  // LONG_BINPUT
        if (!need(4)) return fail_at(at, "truncated LONG_BINPUT");
        return memo_put(le(4), at);
      case 0x94:  // MEMOIZE
        return memo_put(memo_.size(), at);
      case 'h':  // BINGET
        if (!need(1)) return fail_at(at, "truncated BINGET");
        return memo_get(le(1), at);
      case 'j':  // LONG_BINGET
        if (!need(4)) return fail_at(at, "truncated LONG_BINGET");
        return memo_get(le(4), at);
      case 'K':  // BININT1
        if (!need(1)) return fail_at(at, "truncated BININT1");
        return push_scalar(PType::integer, static_cast<int64_t>(le(1)), at);
      case 'M':  // BININT2
        if (!need(2)) return fail_at(at, "truncated BININT2");
        return push_scalar(PType::integer, static_cast<int64_t>(le(2)), at);
      case 'J':  // BININT (signed 32-bit)
        if (!need(4)) return fail_at(at, "truncated BININT");
        return push_scalar(PType::integer, static_cast<int64_t>(static_cast<int32_t>(le(4))), at);
      case 0x8a: case 0x8b: {  // LONG1, LONG4: little-endian two's complement
        const size_t lw = op == 0x8a ? 1 : 4;
        if (!need(lw)) return fail_at(at, "truncated LONG length");
        const uint64_t n = le(lw);
        if (n > 8) return fail_at(at, fmt::format("integer of {} bytes does not fit 64 bits", n));
        if (!need(n)) return fail_at(at, "truncated LONG");
        uint64_t v = le(n);
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign-extend
        return push_scalar(PType::integer, static_cast<int64_t>(v), at);
      }
      case 'G': {  // BINFLOAT, big-endian
        if (!need(8)) return fail_at(at, "truncated BINFLOAT");
        uint64_t v = 0;
        for (int k = 0; k < 8; ++k) v = (v << 8) | static_cast<uint8_t>(p_[pos_ + k]);
        pos_ += 8;
        return push_scalar(PType::floating, static_cast<int64_t>(v), at);  // the double's bits
      }
      case 0x88: return push_scalar(PType::boolean, 1, at);  // NEWTRUE
      case 0x89: return push_scalar(PType::boolean, 0, at);  // NEWFALSE
      case 'N': return push_scalar(PType::none, 0, at);      // NONE
      default:
        return fail_at(at, fmt::format("refusing pickle opcode 0x{:02x} ({}): flight-recorder dumps never contain it "
                                       "and this reader never constructs objects",
                                       op, opcode_name(op)));
    }
  }
};

}  // namespace

Status parse_pickle_into(std::string_view data, PickleDoc& doc, const PickleLimits& limits) {
  Parser p(data, limits, doc);
  return p.run();
}

Result<PickleDoc> parse_pickle(std::string_view data, const PickleLimits& limits) {
  PickleDoc doc;
  if (auto st = parse_pickle_into(data, doc, limits); !st) return st.error();
  return doc;
}

}  // namespace ccdiag::fr
