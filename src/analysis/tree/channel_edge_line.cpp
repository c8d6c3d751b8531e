#include "analysis/tree/channel_edge_line.hpp"

#include <cctype>

namespace ccdiag {

namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

// A run of 1-9 digits at `p`, as an int; nullopt otherwise (the regex's
// \d+ takes longer runs, which stoi then rejects: those go to the regex).
std::optional<int> number(std::string_view s, size_t& p) {
  const size_t from = p;
  while (p < s.size() && digit(s[p])) ++p;
  if (p == from || p - from > 9) return std::nullopt;
  int v = 0;  // at most 9 digits: no overflow
  for (size_t k = from; k < p; ++k) v = v * 10 + (s[k] - '0');
  return v;
}

bool take(std::string_view s, size_t& p, std::string_view lit) {
  if (s.substr(p, lit.size()) != lit) return false;
  p += lit.size();
  return true;
}

// "A[B]"
bool rank_dev(std::string_view s, size_t& p, int& rank, int& dev) {
  const auto r = number(s, p);
  if (!r || !take(s, p, "[")) return false;
  const auto d = number(s, p);
  if (!d || !take(s, p, "]")) return false;
  rank = *r;
  dev = *d;
  return true;
}

}  // namespace

std::optional<ChannelEdgeLine> read_channel_edge_line(std::string_view s) {
  // The first keyword of the line only; a line with "Ring"/"Tree" before it,
  // or none, is the regex's.
  const size_t at = s.find("Channel ");
  if (at == std::string_view::npos) return std::nullopt;
  if (s.substr(0, at).find("Ring") != std::string_view::npos ||
      s.substr(0, at).find("Tree") != std::string_view::npos)
    return std::nullopt;
  size_t p = at + 8;
  // "00/32 : " (\d+\S* ?: ), the channel's number and count.
  if (!number(s, p)) return std::nullopt;
  while (p < s.size() && s[p] != ' ' && s[p] != '\t' && s[p] != ':') ++p;
  if (!take(s, p, " : ")) return std::nullopt;
  ChannelEdgeLine e;
  if (!rank_dev(s, p, e.from_rank, e.from_dev) || !take(s, p, " -> ") || !rank_dev(s, p, e.to_rank, e.to_dev))
    return std::nullopt;
  if (take(s, p, " [")) {
    const size_t w = p;
    while (p < s.size() && (std::isalnum(static_cast<unsigned char>(s[p])) || s[p] == '_')) ++p;
    if (p == w || !take(s, p, "]")) return std::nullopt;
    e.direction = s.substr(w, p - 1 - w);
  }
  if (!take(s, p, " via ")) return std::nullopt;
  // One word to the end of the line: the regex's transport group would take
  // more words after a blank; those lines are the regex's.
  const std::string_view t = s.substr(p);
  if (t.empty() || t.find_first_of(" \t\r\n\f\v") != std::string_view::npos) return std::nullopt;
  e.transport = t;
  return e;
}

}  // namespace ccdiag
