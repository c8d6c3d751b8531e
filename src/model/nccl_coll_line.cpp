#include "ccdiag/nccl_coll_line.hpp"

#include <cstring>

namespace ccdiag::logs {

namespace {

// A signed decimal or (base 16, no "0x") hex number of at most 18 digits, so it
// cannot overflow int64.
bool read_number(std::string_view v, int base, int64_t& out) {
  if (v.empty() || v.size() > 18) return false;
  size_t k = 0;
  const bool neg = v[0] == '-';
  if (neg && ++k == v.size()) return false;
  int64_t n = 0;
  for (; k < v.size(); ++k) {
    const char ch = v[k];
    const int d = ch >= '0' && ch <= '9'                 ? ch - '0'
                  : base == 16 && ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                  : base == 16 && ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                                         : -1;
    if (d < 0) return false;
    n = n * base + d;
  }
  out = neg ? -n : n;
  return true;
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
  auto token = [&]() {
    while (i < t.size() && t[i] == ' ') ++i;
    const size_t s = i;
    while (i < t.size() && t[i] != ' ') ++i;
    return t.substr(s, i - s);
  };
  if (!read_number(token(), 16, c.op_count)) return std::nullopt;
  if (!is(token(), "sendbuff")) return std::nullopt;
  token();  // a pointer or "(nil)"
  if (!is(token(), "recvbuff")) return std::nullopt;
  token();
  if (!is(token(), "count") || !read_number(token(), 10, c.count)) return std::nullopt;
  if (!is(token(), "datatype") || !read_number(token(), 10, c.datatype)) return std::nullopt;
  if (!is(token(), "op") || !read_number(token(), 10, c.redop)) return std::nullopt;
  if (!is(token(), "root") || !read_number(token(), 10, c.root)) return std::nullopt;
  if (!is(token(), "comm")) return std::nullopt;
  c.comm = token();
  if (c.comm.size() < 3 || c.comm.substr(0, 2) != "0x") return std::nullopt;
  const auto nr = token();
  if (nr.size() >= 10 && nr.substr(0, 8) == "[nranks=" && nr.back() == ']') {
    if (!read_number(nr.substr(8, nr.size() - 9), 10, c.nranks) || c.nranks <= 0) return std::nullopt;
  }
  return c;
}

}  // namespace ccdiag::logs
