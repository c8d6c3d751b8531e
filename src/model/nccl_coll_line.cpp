#include "ccdiag/nccl_coll_line.hpp"

#include <cstring>

namespace ccdiag::logs {

namespace {

// A signed decimal or (base 16, no "0x") hex number of at most 18 digits, so it
// cannot overflow int64. The base is a template argument: this runs six times
// on every line of a COLL log.
template <int Base>
[[gnu::always_inline]] inline bool read_number(std::string_view v, int64_t& out) {
  if (v.empty() || v.size() > 18) return false;
  size_t k = 0;
  const bool neg = v[0] == '-';
  if (neg && ++k == v.size()) return false;
  int64_t n = 0;
  for (; k < v.size(); ++k) {
    const unsigned char ch = static_cast<unsigned char>(v[k]);
    int d;
    if (static_cast<unsigned>(ch - '0') < 10u) {
      d = ch - '0';
    } else if (Base == 16 && static_cast<unsigned>(ch - 'a') < 6u) {
      d = ch - 'a' + 10;
    } else if (Base == 16 && static_cast<unsigned>(ch - 'A') < 6u) {
      d = ch - 'A' + 10;
    } else {
      return false;
    }
    n = n * Base + d;
  }
  out = neg ? -n : n;
  return true;
}

// The next token from `i`: spaces skipped, then up to the next space or the
// end. Inlined at each of its dozen uses (as a lambda it was a call each).
[[gnu::always_inline]] inline std::string_view next_token(std::string_view t, size_t& i) {
  const size_t n = t.size();
  while (i < n && t[i] == ' ') ++i;
  const size_t s = i;
  while (i < n && t[i] != ' ') ++i;
  return std::string_view(t.data() + s, i - s);
}

// Whether `tok` is the literal: a compare of constant length, which the
// compiler inlines (string_view's == calls memcmp; six of them a line).
template <size_t N>
bool is(std::string_view tok, const char (&lit)[N]) {
  return tok.size() == N - 1 && std::memcmp(tok.data(), lit, N - 1) == 0;
}

}  // namespace

std::optional<NcclCollLine> parse_nccl_coll_line(std::string_view t) {
  return parse_nccl_coll_line(t, t.find(": opCount "));
}

std::optional<NcclCollLine> parse_nccl_coll_line(std::string_view t, size_t at) {
  if (at == std::string_view::npos || at == 0 || !is(t.substr(at, 10), ": opCount ")) return std::nullopt;
  NcclCollLine c;
  size_t b = at;
  // ASCII only (std::isalnum asks the locale, per byte of every COLL line).
  auto name_char = [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
  };
  while (b > 0 && name_char(t[b - 1])) --b;
  if (b == at) return std::nullopt;
  c.func = t.substr(b, at - b);
  size_t i = at + 10;
  if (!read_number<16>(next_token(t, i), c.op_count)) return std::nullopt;
  if (!is(next_token(t, i), "sendbuff")) return std::nullopt;
  next_token(t, i);  // a pointer or "(nil)"
  if (!is(next_token(t, i), "recvbuff")) return std::nullopt;
  next_token(t, i);
  if (!is(next_token(t, i), "count") || !read_number<10>(next_token(t, i), c.count)) return std::nullopt;
  if (!is(next_token(t, i), "datatype") || !read_number<10>(next_token(t, i), c.datatype)) return std::nullopt;
  if (!is(next_token(t, i), "op") || !read_number<10>(next_token(t, i), c.redop)) return std::nullopt;
  if (!is(next_token(t, i), "root") || !read_number<10>(next_token(t, i), c.root)) return std::nullopt;
  if (!is(next_token(t, i), "comm")) return std::nullopt;
  c.comm = next_token(t, i);
  if (c.comm.size() < 3 || c.comm[0] != '0' || c.comm[1] != 'x') return std::nullopt;
  const auto nr = next_token(t, i);
  if (nr.size() >= 10 && std::memcmp(nr.data(), "[nranks=", 8) == 0 && nr.back() == ']') {
    if (!read_number<10>(nr.substr(8, nr.size() - 9), c.nranks) || c.nranks <= 0) return std::nullopt;
  }
  return c;
}

}  // namespace ccdiag::logs
