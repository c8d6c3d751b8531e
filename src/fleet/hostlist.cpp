#include "fleet/hostlist.hpp"

#include <algorithm>
#include <set>
#include <unordered_set>

namespace ccdiag {

namespace {

// Splits at commas that are not inside brackets; whitespace also separates.
Result<std::vector<std::string>> split_terms(std::string_view list) {
  std::vector<std::string> terms;
  std::string cur;
  int depth = 0;
  for (char c : list) {
    if (c == '[') {
      if (depth++ > 0) return make_error("nested '[' in host list", std::string(list));
    } else if (c == ']') {
      if (--depth < 0) return make_error("']' without '[' in host list", std::string(list));
    }
    if (c == ',' && depth == 0) {
      terms.push_back(cur);
      cur.clear();
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (depth > 0) return make_error("space inside brackets in host list", std::string(list));
      if (!cur.empty()) terms.push_back(cur), cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (depth != 0) return make_error("'[' without ']' in host list", std::string(list));
  terms.push_back(cur);
  terms.erase(std::remove(terms.begin(), terms.end(), std::string()), terms.end());
  return terms;
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() <= 18 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "1-3,7,010-012" -> the formatted numbers.
Result<std::vector<std::string>> expand_bracket(std::string_view body, const std::string& term) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t comma = body.find(',', start);
    if (comma == std::string_view::npos) comma = body.size();
    std::string_view item = body.substr(start, comma - start);
    const size_t dash = item.find('-');
    std::string_view lo = dash == std::string_view::npos ? item : item.substr(0, dash);
    std::string_view hi = dash == std::string_view::npos ? item : item.substr(dash + 1);
    if (!all_digits(lo) || !all_digits(hi))
      return make_error("bad range '" + std::string(item) + "' (expected N or N-M)", term);
    const long long a = std::stoll(std::string(lo)), b = std::stoll(std::string(hi));
    if (a > b) return make_error("range '" + std::string(item) + "' runs backwards", term);
    if (b - a >= static_cast<long long>(kMaxHosts))
      return make_error("range '" + std::string(item) + "' is larger than " + std::to_string(kMaxHosts) + " hosts", term);
    const size_t width = (lo.size() > 1 && lo.front() == '0') ? lo.size() : 0;
    for (long long n = a; n <= b; ++n) {
      std::string s = std::to_string(n);
      if (s.size() < width) s.insert(0, width - s.size(), '0');
      out.push_back(std::move(s));
      if (out.size() > kMaxHosts)
        return make_error("host list expands to more than " + std::to_string(kMaxHosts) + " hosts", term);
    }
    if (comma == body.size()) break;
    start = comma + 1;
  }
  return out;
}

// Expands one term with any number of bracket groups (cartesian product).
Status expand_term(const std::string& term, std::vector<std::string>& out) {
  std::vector<std::string> partial{""};
  size_t pos = 0;
  while (pos < term.size()) {
    const size_t open = term.find('[', pos);
    const std::string literal = term.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
    for (auto& p : partial) p += literal;
    if (open == std::string::npos) break;
    const size_t close = term.find(']', open);
    if (close == std::string::npos) return make_error("'[' without ']'", term);
    auto nums = expand_bracket(std::string_view(term).substr(open + 1, close - open - 1), term);
    if (!nums) return nums.error();
    if (partial.size() * nums->size() > kMaxHosts)
      return make_error("host list expands to more than " + std::to_string(kMaxHosts) + " hosts", term);
    std::vector<std::string> next;
    next.reserve(partial.size() * nums->size());
    for (const auto& p : partial)
      for (const auto& n : *nums) next.push_back(p + n);
    partial = std::move(next);
    pos = close + 1;
  }
  for (auto& p : partial) {
    if (!is_safe_host_name(p)) return make_error("'" + p + "' is not a valid host name", term);
    out.push_back(std::move(p));
  }
  return Ok{};
}

}  // namespace

bool is_safe_host_name(std::string_view name) {
  if (name.empty() || name.size() > 253 || name.front() == '-' || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

Result<std::vector<std::string>> expand_hostlist(std::string_view list) {
  auto terms = split_terms(list);
  if (!terms) return terms.error();
  std::vector<std::string> include, exclude;
  for (const auto& t : *terms) {
    const bool minus = t.front() == '-';
    const std::string body = minus ? t.substr(1) : t;
    if (body.empty()) return make_error("empty host name", t);
    if (auto st = expand_term(body, minus ? exclude : include); !st) return st.error();
    if (include.size() > kMaxHosts)
      return make_error("host list expands to more than " + std::to_string(kMaxHosts) + " hosts", t);
  }
  const std::unordered_set<std::string> ex(exclude.begin(), exclude.end());
  std::unordered_set<std::string> seen;
  std::vector<std::string> out;
  for (auto& h : include)
    if (!ex.count(h) && seen.insert(h).second) out.push_back(std::move(h));
  return out;
}

Result<std::vector<std::string>> expand_hostlist_lines(std::string_view text) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  size_t lineno = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++lineno;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    auto hosts = expand_hostlist(line);
    if (!hosts) return make_error(hosts.error().message, "line " + std::to_string(lineno) + ": " + hosts.error().context);
    for (auto& h : *hosts)
      if (seen.insert(h).second) out.push_back(std::move(h));
    if (out.size() > kMaxHosts) return make_error("more than " + std::to_string(kMaxHosts) + " hosts", "host file");
  }
  return out;
}

}  // namespace ccdiag
