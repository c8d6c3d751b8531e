#include "analysis/tree/line_who.hpp"

#include <charconv>

#include <re2/re2.h>

namespace ccdiag {

namespace {

// Bytes a host name of the NCCL prefix may hold: all but ':', '[', ']' and
// whitespace. A table: this runs over the head of every line of a COLL log.
struct HostChars {
  bool ok[256];
  constexpr HostChars() : ok() {
    for (int c = 0; c < 256; ++c) ok[c] = true;
    for (unsigned char c : {':', '[', ']', ' ', '\t', '\n', '\r', '\f', '\v'}) ok[c] = false;
  }
};
constexpr HostChars kHostChars;
bool host_char(char c) { return kHostChars.ok[static_cast<unsigned char>(c)]; }
bool digit(char c) { return c >= '0' && c <= '9'; }

// Digits from i; returns the end (i when none).
size_t digits(std::string_view s, size_t i) {
  while (i < s.size() && digit(s[i])) ++i;
  return i;
}

}  // namespace

std::optional<NcclPrefix> find_nccl_prefix(std::string_view s) {
  // From a given start the match is fixed (the host cannot hold ':'), and any
  // start inside a run of host bytes matches where the run's start does: so
  // the leftmost match begins at the start of the first run that works.
  for (size_t i = 0; i < s.size();) {
    if (!host_char(s[i])) {
      ++i;
      continue;
    }
    const size_t run = i;
    while (i < s.size() && host_char(s[i])) ++i;
    if (i >= s.size() || s[i] != ':') continue;
    const size_t p0 = i + 1, p1 = digits(s, p0);
    if (p1 == p0 || p1 >= s.size() || s[p1] != ':') continue;
    const size_t t0 = p1 + 1, t1 = digits(s, t0);
    if (t1 == t0 || s.substr(t1, 2) != " [") continue;
    const size_t d0 = t1 + 2, d1 = digits(s, d0);
    if (d1 == d0 || s.substr(d1, 2) != "] ") continue;
    return NcclPrefix{run, s.substr(run, i - run), s.substr(p0, p1 - p0), s.substr(t0, t1 - t0),
                      s.substr(d0, d1 - d0)};
  }
  return std::nullopt;
}

std::optional<std::pair<size_t, std::string_view>> find_rank_tag(std::string_view s) {
  for (size_t at = s.find('['); at != std::string_view::npos; at = s.find('[', at + 1)) {
    size_t i = at + 1;
    if (s.substr(i, 4) == "rank")
      i += 4;
    else if (s.substr(i, 5) == "Rank ")
      i += 5;
    else
      continue;
    const size_t e = digits(s, i);
    if (e > i && e < s.size() && s[e] == ']') return std::make_pair(at, s.substr(i, e - i));
  }
  return std::nullopt;
}

namespace {

template <typename T>
std::optional<T> number(std::string_view s) {
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

void process_key_of(std::string_view line, std::string& out) {
  out.clear();
  if (auto p = find_nccl_prefix(line.substr(0, 160)); p && p->start < 64) {
    if (auto pid = number<int64_t>(p->pid)) {
      out.append(p->host).push_back(':');
      char buf[24];
      const auto r = std::to_chars(buf, buf + sizeof buf, *pid);
      out.append(buf, r.ptr);
      return;
    }
  }
  out.push_back(':');
}

LineWho who_of(std::string_view line) {
  LineWho w;
  const std::string_view head = line.substr(0, 160);
  if (auto p = find_nccl_prefix(head); p && p->start < 64) {
    if (auto pid = number<int64_t>(p->pid)) {
      w.host = std::string(p->host);
      w.pid = *pid;
      w.dev = std::string(p->dev);
    }
  }
  // "[trainer0|3]:": rare, and anchored, so the expression stays.
  static const RE2 role_tag(R"(^\[[A-Za-z_]*\d+\|(\d+)\]:)");
  std::string rank;
  if (!head.empty() && head[0] == '[' && head.find('|') != std::string_view::npos &&
      RE2::PartialMatch(re2::StringPiece(head.data(), head.size()), role_tag, &rank)) {
    if (auto r = number<int>(rank)) w.rank = *r;
  } else if (auto t = find_rank_tag(head); t && t->first < 64) {
    if (auto r = number<int>(t->second)) w.rank = *r;
  }
  return w;
}

}  // namespace ccdiag
