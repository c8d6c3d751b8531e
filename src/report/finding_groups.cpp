#include "report/finding_groups.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace ccdiag {

namespace {

void erase_all(std::string& s, const std::string& what) {
  if (what.empty()) return;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at)) s.erase(at, what.size());
}

// The summary with the member's own identity taken out, so "rank 5: X" and
// "rank 6: X" group while "seq 42" and "seq 43" (other facts) do not.
std::string identity_free(const Finding& f) {
  std::string s = f.summary;
  erase_all(s, f.subject.describe());
  if (f.subject.rank) {
    erase_all(s, fmt::format("[rank{}]", *f.subject.rank));
    erase_all(s, fmt::format("Rank {}", *f.subject.rank));
    erase_all(s, fmt::format("rank {}", *f.subject.rank));
  }
  if (f.subject.host) erase_all(s, *f.subject.host);
  if (f.subject.pid) erase_all(s, fmt::format("pid {}", *f.subject.pid));
  if (f.subject.tid) erase_all(s, fmt::format("tid {}", *f.subject.tid));
  return s;
}

// Splits "node017" into ("node", "017"); no trailing digits gives ("name", "").
std::pair<std::string, std::string> split_number(const std::string& h) {
  size_t i = h.size();
  while (i > 0 && h[i - 1] >= '0' && h[i - 1] <= '9') --i;
  return {h.substr(0, i), h.substr(i)};
}

}  // namespace

std::vector<FindingGroup> group_findings(const std::vector<Finding>& findings) {
  std::vector<FindingGroup> groups;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding& f = findings[i];
    const std::string key = f.id + '\x1f' + std::string(to_string(f.severity)) + '\x1f' +
                            std::string(to_string(f.role)) + '\x1f' + identity_free(f);
    auto [it, fresh] = index.emplace(key, groups.size());
    if (fresh) groups.push_back(FindingGroup{i, {}, {}, {}});
    FindingGroup& g = groups[it->second];
    g.members.push_back(i);
    if (f.subject.rank) g.ranks.push_back(*f.subject.rank);
    if (f.subject.host) g.hosts.push_back(*f.subject.host);
  }
  for (auto& g : groups) {
    std::sort(g.ranks.begin(), g.ranks.end());
    g.ranks.erase(std::unique(g.ranks.begin(), g.ranks.end()), g.ranks.end());
    std::sort(g.hosts.begin(), g.hosts.end());
    g.hosts.erase(std::unique(g.hosts.begin(), g.hosts.end()), g.hosts.end());
  }
  return groups;
}

std::string compress_ranks(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  auto add = [&](const std::string& term) { out += (out.empty() ? "" : ",") + term; };
  size_t i = 0;
  while (i < ranks.size()) {
    // The longest run of one step from here.
    size_t j = i + 1;
    if (j < ranks.size()) {
      const int step = ranks[j] - ranks[i];
      while (j + 1 < ranks.size() && ranks[j + 1] - ranks[j] == step) ++j;
      const size_t len = j - i + 1;
      if (step == 1 && len >= 2) {
        add(fmt::format("{}-{}", ranks[i], ranks[j]));
        i = j + 1;
        continue;
      }
      if (step > 1 && len >= 4) {
        add(fmt::format("{},{},{}..{}", ranks[i], ranks[i + 1], ranks[i + 2], ranks[j]));
        i = j + 1;
        continue;
      }
    }
    add(std::to_string(ranks[i]));
    ++i;
  }
  return out;
}

std::string compress_hosts(std::vector<std::string> hosts) {
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  // prefix + digit width -> numbers (as text, to keep zero padding)
  std::map<std::pair<std::string, size_t>, std::vector<std::string>> by_prefix;
  std::vector<std::string> plain;
  for (const auto& h : hosts) {
    auto [prefix, digits] = split_number(h);
    if (digits.empty() || digits.size() > 9) plain.push_back(h);
    else by_prefix[{prefix, digits.size()}].push_back(digits);
  }
  std::vector<std::string> terms = plain;
  for (auto& [key, nums] : by_prefix) {
    const auto& [prefix, width] = key;
    if (nums.size() == 1) {
      terms.push_back(prefix + nums.front());
      continue;
    }
    std::sort(nums.begin(), nums.end(), [](const std::string& a, const std::string& b) { return std::stoll(a) < std::stoll(b); });
    std::string inner;
    size_t i = 0;
    while (i < nums.size()) {
      size_t j = i;
      while (j + 1 < nums.size() && std::stoll(nums[j + 1]) == std::stoll(nums[j]) + 1) ++j;
      inner += (inner.empty() ? "" : ",") + (j > i ? nums[i] + "-" + nums[j] : nums[i]);
      i = j + 1;
    }
    terms.push_back(prefix + "[" + inner + "]");
  }
  std::sort(terms.begin(), terms.end());
  std::string out;
  for (const auto& t : terms) out += (out.empty() ? "" : ",") + t;
  return out;
}

std::string describe_group(const FindingGroup& g) {
  std::string out;
  if (g.ranks.size() == 1) out = fmt::format("rank {}", g.ranks.front());
  else if (g.ranks.size() > 1) out = fmt::format("ranks {} ({})", compress_ranks(g.ranks), g.ranks.size());
  if (!g.hosts.empty()) {
    if (!out.empty()) out += " on ";
    out += g.hosts.size() == 1 ? g.hosts.front() : compress_hosts(g.hosts);
  }
  return out;
}

}  // namespace ccdiag
