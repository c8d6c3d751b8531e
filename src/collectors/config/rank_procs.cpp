#include "collectors/config/rank_procs.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace ccdiag {

namespace {
std::optional<int> to_int(std::string_view v) {
  int n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size() || n < 0) return std::nullopt;
  return n;
}
}  // namespace

bool rank_from_environ(std::string_view env, ConfigRankProcess& out) {
  while (!env.empty()) {
    const size_t z = env.find('\0');
    std::string_view kv = env.substr(0, z);
    env = z == std::string_view::npos ? std::string_view{} : env.substr(z + 1);
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view k = kv.substr(0, eq), v = kv.substr(eq + 1);
    if (k == "RANK") out.rank = to_int(v);
    else if (k == "LOCAL_RANK") out.local_rank = to_int(v);
    else if (k == "CUDA_VISIBLE_DEVICES") out.cuda_visible_devices = std::string(v.substr(0, 128));
  }
  return out.rank.has_value() || out.local_rank.has_value();
}

std::optional<int64_t> tgid_from_status(std::string_view status) {
  const size_t at = status.find("\nTgid:");
  const size_t start = status.substr(0, 5) == "Tgid:" ? 0 : at;
  if (start == std::string_view::npos) return std::nullopt;
  std::string_view rest = status.substr(start + (start == 0 ? 5 : 6));
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
  if (ec != std::errc() || p == rest.data()) return std::nullopt;
  return v;
}

RankScan find_rank_processes(const SysRoot& root, size_t max_processes) {
  RankScan scan;
  auto entries = root.list_dir("/proc");
  if (!entries) return scan;
  size_t seen = 0;
  for (const auto& name : *entries) {
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (++seen > max_processes) break;
    auto env = root.read_file("/proc/" + name + "/environ", 1 << 20);
    if (!env) {
      ++scan.unreadable;
      continue;
    }
    ConfigRankProcess p;
    if (!rank_from_environ(*env, p)) continue;
    p.pid = std::stoll(name);
    p.comm = root.read_line("/proc/" + name + "/comm").value_or("");
    const std::string status = root.read_file("/proc/" + name + "/status", 16384).value_or("");
    if (const size_t at = status.find("\nPPid:"); at != std::string::npos) p.ppid = std::atoll(status.c_str() + at + 7);
    scan.ranks.push_back(std::move(p));
  }
  // Dataloader workers and other children inherit RANK from their rank: keep
  // the topmost process of each rank only.
  std::vector<ConfigRankProcess> kept;
  for (const auto& p : scan.ranks) {
    const bool child_of_same_rank = std::any_of(scan.ranks.begin(), scan.ranks.end(), [&](const ConfigRankProcess& q) {
      return q.pid == p.ppid && q.rank == p.rank && q.local_rank == p.local_rank;
    });
    if (!child_of_same_rank) kept.push_back(p);
  }
  scan.ranks = std::move(kept);
  return scan;
}

}  // namespace ccdiag
