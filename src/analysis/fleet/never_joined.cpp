#include "analysis/fleet/never_joined.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace ccdiag {
namespace {

// Absences by (process group, rank); "" as the group: any group (the
// evidence does not say which one).
using Absences = std::map<std::pair<std::string, int>, std::string>;

void add(Absences& a, const std::string& pg, int rank, const Finding& f) {
  if (rank < 0) return;
  a.emplace(std::make_pair(pg, rank), f.id + ": " + f.summary);
}

// "1, 3" / "1,3" (the desync report's rank list) -> each number.
std::vector<int> rank_list(std::string_view s) {
  std::vector<int> out;
  int v = -1;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      v = (v < 0 ? 0 : v) * 10 + (c - '0');
      if (v > 1 << 24) return {};  // not a rank list
    } else {
      if (v >= 0) out.push_back(v);
      v = -1;
    }
  }
  if (v >= 0) out.push_back(v);
  return out;
}

Absences collect(const std::vector<Finding>& findings) {
  Absences a;
  for (const auto& f : findings) {
    const std::string pg = f.subject.process_group.value_or("");
    if (auto it = f.fields.find("missing"); it != f.fields.end() && it->is_array()) {
      for (const auto& x : *it)
        if (x.is_object() && x.value("reason", "") == "never_called" && x.contains("rank") && x["rank"].is_number_integer())
          add(a, pg, x["rank"].get<int>(), f);
    }
    if (f.id == "pytorch.desync.lagging_ranks" || f.id == "pytorch.desync.finished_not_joined") {
      if (auto it = f.fields.find("ranks"); it != f.fields.end() && it->is_string())
        for (int r : rank_list(it->get<std::string>())) add(a, "", r, f);
    }
    if ((f.id == "tree.store_key_never_set" || f.id == "tree.store_clients_missing" ||
         f.id == "torchrun.rank_left_early") &&
        f.subject.rank)
      add(a, "", *f.subject.rank, f);
  }
  return a;
}

}  // namespace

void mark_never_joined(FleetSummary& summary, const std::vector<Finding>& findings) {
  const Absences a = collect(findings);
  if (a.empty()) return;
  for (auto& sp : summary.sequences) {
    // A sub-group's rows are the ranks that reported it; a member its peers
    // saw never arrive joins the picture here.
    for (const auto& [key, why] : a) {
      if (key.first.empty() || key.first != sp.process_group) continue;
      auto at = std::lower_bound(sp.rows.begin(), sp.rows.end(), key.second,
                                 [](const RankRow& r, int rank) { return r.rank < rank; });
      if (at != sp.rows.end() && at->rank == key.second) continue;
      RankRow row;
      row.rank = key.second;
      row.state = RankState::missing;  // marked below
      sp.rows.insert(at, std::move(row));
      ++sp.missing;
      ++sp.group_size;
    }
    for (auto& row : sp.rows) {
      if (row.state != RankState::missing) continue;
      auto it = a.find({sp.process_group, row.rank});
      if (it == a.end()) it = a.find({"", row.rank});
      if (it == a.end()) continue;
      row.state = RankState::never_joined;
      row.absence = it->second;
      --sp.missing;
      ++sp.never_joined;
    }
  }
}

}  // namespace ccdiag
