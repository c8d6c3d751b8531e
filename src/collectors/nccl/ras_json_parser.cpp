// Parser of the JSON STATUS report (NCCL >= 2.28.7, rasDumpCommsToJSON in
// NVIDIA/nccl src/ras/client_support.cc). NCCL prints it with printf, not a
// JSON library, so every field is read tolerantly: a missing or mistyped
// field keeps its default and is counted, it never stops the parse.
#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "collectors/nccl/ras_status.hpp"

namespace ccdiag::nccl {

namespace {

using nlohmann::json;

template <class T>
T get_or(const json& j, const char* key, T fallback, int& bad) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    ++bad;
    return fallback;
  }
}

RasPlace place_of(const json& r, int& bad) {
  RasPlace p;
  p.pid = get_or<int64_t>(r, "pid", -1, bad);
  p.host = get_or<std::string>(r, "host", "", bad);
  if (p.host == "unknown") p.host.clear();
  p.cuda_dev = get_or<int>(r, "cuda_dev", -1, bad);
  p.nvml_dev = get_or<int>(r, "nvml_dev", -1, bad);
  if (p.cuda_dev >= 0)
    p.gpu = p.cuda_dev == p.nvml_dev || p.nvml_dev < 0 ? std::to_string(p.cuda_dev)
                                                       : fmt::format("{} (NVML {})", p.cuda_dev, p.nvml_dev);
  return p;
}

// Ranks grouped by a key, largest group first (the reference the others are
// compared against, as RAS does with rank 0's values).
template <class Key, class F>
std::vector<std::pair<Key, std::vector<const RasRankInfo*>>> group_by(const std::vector<RasRankInfo>& ranks, F key) {
  std::map<Key, std::vector<const RasRankInfo*>> m;
  for (const auto& r : ranks) m[key(r)].push_back(&r);
  std::vector<std::pair<Key, std::vector<const RasRankInfo*>>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  return v;
}

std::string status_of(const RasRankInfo& r) {
  if (r.abort_flag) return "ABORT";
  if (r.finalize_called || r.destroy_flag) return "FINALIZE";
  if (r.init_state == 0) return "RUNNING";
  return "INIT";
}

void derive_problems(RasComm& c) {
  // Errors: init_state / async_error other than success (0) and in progress (7).
  for (const char* kind : {"init", "async"}) {
    std::map<int, RasRankError> by_code;
    for (const auto& r : c.ranks) {
      int code = std::string(kind) == "init" ? r.init_state : r.async_error;
      if (code == 0 || code == 7) continue;
      auto& e = by_code[code];
      e.kind = kind;
      e.code = code;
      e.text = ras_error_text(code);
      ++e.count;
      e.ranks.push_back(r.rank);
    }
    for (auto& [code, e] : by_code) c.errors.push_back(std::move(e));
  }
  if (!c.errors.empty()) c.flags.push_back("ERROR");
  if (!c.missing.empty()) c.flags.push_back("INCOMPLETE");
  // Status mismatch.
  auto statuses = group_by<std::string>(c.ranks, status_of);
  bool mismatch = false;
  if (statuses.size() > 1) {
    mismatch = true;
    for (auto& [st, members] : statuses) {
      RasStatusGroup g{static_cast<int>(members.size()), st, {}};
      for (const auto* m : members) g.ranks.push_back(m->rank);
      c.status_groups.push_back(std::move(g));
    }
  }
  // Per-function count mismatches.
  std::vector<std::string> funcs;
  for (const auto& r : c.ranks)
    for (const auto& [f, n] : r.counts)
      if (std::find(funcs.begin(), funcs.end(), f) == funcs.end()) funcs.push_back(f);
  for (const auto& f : funcs) {
    auto groups = group_by<uint64_t>(c.ranks, [&f](const RasRankInfo& r) {
      auto it = r.counts.find(f);
      return it == r.counts.end() ? uint64_t{0} : it->second;
    });
    if (groups.size() < 2) continue;
    mismatch = true;
    RasCountMismatch m{f, {}};
    for (auto& [count, members] : groups) {
      RasCountGroup g{static_cast<int>(members.size()), static_cast<int64_t>(count), {}};
      for (const auto* r : members) g.ranks.push_back(r->rank);
      m.groups.push_back(std::move(g));
    }
    c.count_mismatches.push_back(std::move(m));
  }
  if (mismatch) c.flags.push_back("MISMATCH");
}

}  // namespace

RasStatus parse_ras_json(std::string_view text) {
  RasStatus s;
  s.format = "json";
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  bool repaired = false;
  if (doc.is_discarded()) {
    // NCCL 2.28.7 and 2.28.9 print `"nvml_dev": N` without the comma that
    // must follow it in every missing_ranks entry (fixed in 2.29): the reply
    // is invalid JSON exactly when ranks are missing. Insert the commas the
    // printf layout implies (one member per line) and try again.
    std::string fixed;
    fixed.reserve(text.size() + 64);
    std::vector<std::string_view> lines;
    size_t p = 0;
    while (p <= text.size()) {
      size_t nl = text.find('\n', p);
      lines.push_back(text.substr(p, nl == std::string_view::npos ? std::string_view::npos : nl - p));
      if (nl == std::string_view::npos) break;
      p = nl + 1;
    }
    auto first_char = [](std::string_view l) {
      size_t i = l.find_first_not_of(" \t\r");
      return i == std::string_view::npos ? '\0' : l[i];
    };
    auto last_char = [](std::string_view l) {
      size_t i = l.find_last_not_of(" \t\r");
      return i == std::string_view::npos ? '\0' : l[i];
    };
    for (size_t i = 0; i < lines.size(); ++i) {
      fixed.append(lines[i]);
      char e = last_char(lines[i]);
      size_t j = i + 1;
      while (j < lines.size() && first_char(lines[j]) == '\0') ++j;
      if (j < lines.size() && first_char(lines[j]) == '"' &&
          (std::isdigit(static_cast<unsigned char>(e)) || e == '"' || e == 'e' || e == 'l' || e == '}' || e == ']'))
        fixed.push_back(',');
      if (i + 1 < lines.size()) fixed.push_back('\n');
    }
    doc = json::parse(fixed, nullptr, false);
    repaired = !doc.is_discarded();
  }
  if (doc.is_discarded() || !doc.is_object()) {
    s.parse_error = "not a JSON object";
    return s;
  }
  int bad = 0;
  s.recognised = doc.contains("communicators") || doc.contains("nccl_version");
  s.nccl_version = get_or<std::string>(doc, "nccl_version", "", bad);
  s.cuda_runtime = get_or<int>(doc, "cuda_runtime_version", -1, bad);
  s.cuda_driver = get_or<int>(doc, "cuda_driver_version", -1, bad);
  s.timestamp = get_or<std::string>(doc, "timestamp", "", bad);
  s.communicators_count = get_or<int>(doc, "communicators_count", -1, bad);
  if (doc.contains("ras") && doc["ras"].is_object()) {
    s.collection_time_s = get_or<double>(doc["ras"], "collection_time_sec", -1.0, bad);
    s.timeouts = get_or<int>(doc["ras"], "timeouts_count", 0, bad);
  }
  std::map<std::pair<std::string, int64_t>, RasProcess> dead, missing;
  if (doc.contains("communicators") && doc["communicators"].is_array()) {
    for (const auto& cj : doc["communicators"]) {
      if (!cj.is_object()) {
        ++bad;
        continue;
      }
      RasComm c;
      c.hash = normalise_comm_hash(get_or<std::string>(cj, "hash", "", bad));
      c.size = get_or<int>(cj, "size", -1, bad);
      c.ranks_count = get_or<int>(cj, "ranks_count", -1, bad);
      c.missing_count = get_or<int>(cj, "missing_ranks_count", -1, bad);
      if (cj.contains("ranks") && cj["ranks"].is_array())
        for (const auto& rj : cj["ranks"]) {
          RasRankInfo r;
          r.rank.rank = get_or<int>(rj, "rank", -1, bad);
          r.rank.place = place_of(rj, bad);
          const json st = rj.is_object() && rj.contains("status") ? rj["status"] : json::object();
          r.init_state = get_or<int>(st, "init_state", 0, bad);
          r.async_error = get_or<int>(st, "async_error", 0, bad);
          r.finalize_called = get_or<bool>(st, "finalize_called", false, bad);
          r.destroy_flag = get_or<bool>(st, "destroy_flag", false, bad);
          r.abort_flag = get_or<bool>(st, "abort_flag", false, bad);
          if (rj.is_object() && rj.contains("collective_counts") && rj["collective_counts"].is_object())
            for (const auto& [k, v] : rj["collective_counts"].items())
              if (v.is_number_unsigned() || v.is_number_integer()) r.counts[k] = v.get<uint64_t>();
          c.ranks.push_back(std::move(r));
        }
      if (cj.contains("missing_ranks") && cj["missing_ranks"].is_array())
        for (const auto& mj : cj["missing_ranks"]) {
          RasMissingRank m;
          m.rank.rank = get_or<int>(mj, "rank", -1, bad);
          m.rank.place = place_of(mj, bad);
          m.rank.known = m.rank.place.pid >= 0;
          const json st = mj.is_object() && mj.contains("status") ? mj["status"] : json::object();
          m.unresponsive = get_or<bool>(st, "unresponsive", true, bad);
          m.considered_dead = get_or<bool>(st, "considered_dead", false, bad);
          RasProcess p{m.rank.place, m.rank.place.gpu};
          auto key = std::make_pair(m.rank.place.host, m.rank.place.pid);
          if (m.considered_dead) dead.emplace(key, p);
          else if (m.unresponsive) missing.emplace(key, p);
          c.missing.push_back(std::move(m));
        }
      c.missing_reported = static_cast<int>(c.missing.size());
      derive_problems(c);
      s.comms.push_back(std::move(c));
    }
  }
  for (auto& [k, p] : dead) s.dead_processes.push_back(p);
  for (auto& [k, p] : missing) s.missing_processes.push_back(p);
  s.dead_processes_count = static_cast<int>(s.dead_processes.size());
  s.missing_processes_count = static_cast<int>(s.missing_processes.size());
  s.skipped_lines = bad;
  s.complete = s.recognised;
  s.repaired = repaired;
  return s;
}

RasStatus parse_ras_reply(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t')) ++i;
  if (i < text.size() && text[i] == '{') return parse_ras_json(text);
  return parse_ras_text(text);
}

int ras_error_code(std::string_view text) {
  static const std::pair<std::string_view, int> names[] = {
      {"Unhandled CUDA error", 1}, {"System error", 2},         {"Internal error", 3},
      {"Invalid argument", 4},     {"Invalid usage", 5},        {"Remote process error", 6},
      {"NCCL operation in progress", 7}, {"Timeout", 8}};
  for (const auto& [n, c] : names)
    if (n == text) return c;
  return -1;
}

std::string ras_error_text(int code) {
  switch (code) {
    case 1: return "Unhandled CUDA error";
    case 2: return "System error";
    case 3: return "Internal error";
    case 4: return "Invalid argument";
    case 5: return "Invalid usage";
    case 6: return "Remote process error";
    case 7: return "NCCL operation in progress";
    case 8: return "Timeout";
    default: return "Unexpected error";
  }
}

std::string normalise_comm_hash(std::string_view s) {
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return "";
  std::string h;
  for (char ch : s) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!((l >= '0' && l <= '9') || (l >= 'a' && l <= 'f'))) return "";
    h.push_back(l);
  }
  return "0x" + std::string(16 - h.size(), '0') + h;
}

namespace {

json place_json(const RasPlace& p) {
  json j = json::object();
  if (p.pid >= 0) j["pid"] = p.pid;
  if (!p.host.empty()) j["host"] = p.host;
  if (!p.gpu.empty()) j["gpu"] = p.gpu;
  if (p.cuda_dev >= 0) j["cuda_dev"] = p.cuda_dev;
  if (p.nvml_dev >= 0) j["nvml_dev"] = p.nvml_dev;
  return j;
}

json rank_json(const RasRank& r) {
  json j = place_json(r.place);
  j["rank"] = r.rank;
  if (!r.known) j["process_known"] = false;
  return j;
}

}  // namespace

nlohmann::json to_json(const RasStatus& s) {
  json comms = json::array();
  for (const auto& c : s.comms) {
    json missing = json::array();
    for (const auto& m : c.missing) {
      json j = rank_json(m.rank);
      j["unresponsive"] = m.unresponsive;
      j["considered_dead"] = m.considered_dead;
      missing.push_back(std::move(j));
    }
    json errors = json::array();
    for (const auto& e : c.errors) {
      json ranks = json::array();
      for (const auto& r : e.ranks) ranks.push_back(rank_json(r));
      errors.push_back({{"kind", e.kind}, {"code", e.code}, {"text", e.text}, {"count", e.count}, {"ranks", ranks}});
    }
    json mism = json::array();
    for (const auto& m : c.count_mismatches) {
      json groups = json::array();
      for (const auto& g : m.groups) {
        json ranks = json::array();
        for (const auto& r : g.ranks) ranks.push_back(rank_json(r));
        groups.push_back({{"nranks", g.nranks}, {"launched", g.count}, {"ranks", ranks}});
      }
      mism.push_back({{"func", m.func}, {"groups", groups}});
    }
    json sgroups = json::array();
    for (const auto& g : c.status_groups) {
      json ranks = json::array();
      for (const auto& r : g.ranks) ranks.push_back(rank_json(r));
      sgroups.push_back({{"nranks", g.nranks}, {"status", g.status}, {"ranks", ranks}});
    }
    json j{{"hash", c.hash}, {"flags", c.flags}, {"missing_ranks", missing}, {"errors", errors},
           {"count_mismatches", mism}, {"status_groups", sgroups}};
    if (!c.label.empty()) j["label"] = c.label;
    if (c.size >= 0) j["size"] = c.size;
    if (c.ranks_count >= 0) j["ranks_count"] = c.ranks_count;
    j["missing_count"] = c.missing_count >= 0 ? c.missing_count : c.missing_reported;
    if (!c.ranks.empty()) {
      json ranks = json::array();
      for (const auto& r : c.ranks) {
        json rj = rank_json(r.rank);
        rj["init_state"] = r.init_state;
        rj["async_error"] = r.async_error;
        rj["finalize_called"] = r.finalize_called;
        rj["destroy_flag"] = r.destroy_flag;
        rj["abort_flag"] = r.abort_flag;
        rj["collective_counts"] = r.counts;
        ranks.push_back(std::move(rj));
      }
      j["ranks"] = ranks;
    }
    comms.push_back(std::move(j));
  }
  auto procs = [](const std::vector<RasProcess>& v) {
    json a = json::array();
    for (const auto& p : v) {
      json j = place_json(p.place);
      j["gpus"] = p.gpus;
      a.push_back(std::move(j));
    }
    return a;
  };
  json groups = json::array();
  for (const auto& g : s.groups)
    groups.push_back({{"group", g.group}, {"comms", g.comms}, {"nodes_per_comm", g.nodes_per_comm},
                      {"ranks_per_node", g.ranks_per_node}, {"ranks_per_comm", g.ranks_per_comm},
                      {"ranks_in_group", g.ranks_in_group}, {"status", g.status}, {"errors", g.errors}});
  json j{{"format", s.format},
         {"recognised", s.recognised},
         {"complete", s.complete},
         {"nccl_version", s.nccl_version},
         {"cuda_runtime_version", s.cuda_runtime},
         {"cuda_driver_version", s.cuda_driver},
         {"collection_time_s", s.collection_time_s},
         {"timeouts", s.timeouts},
         {"missing_processes_count", s.missing_processes_count},
         {"missing_processes", procs(s.missing_processes)},
         {"dead_processes_count", s.dead_processes_count},
         {"dead_processes", procs(s.dead_processes)},
         {"groups", groups},
         {"communicators", comms},
         {"skipped", s.skipped_lines}};
  if (s.nodes >= 0)
    j["job"] = {{"nodes", s.nodes}, {"processes_per_node", s.processes_per_node},
                {"gpus_per_process", s.gpus_per_process}, {"processes", s.processes}, {"gpus", s.gpus}};
  if (!s.timestamp.empty()) j["timestamp"] = s.timestamp;
  if (s.communicators_count >= 0) j["communicators_count"] = s.communicators_count;
  if (!s.parse_error.empty()) j["parse_error"] = s.parse_error;
  if (s.repaired) j["repaired"] = true;
  return j;
}

}  // namespace ccdiag::nccl
