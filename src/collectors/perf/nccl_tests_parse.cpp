// nccl-tests output parsers (reference perf-and-fleet.md §1.2-1.4). The text
// format changed across versions (`error` -> `#wrong`, `root` added, `Group`
// in device lines, bus id width, `-I 1` columns, `-S 1` timestamps), so every
// table is mapped through its own header row by column NAME.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collectors/perf/json_input.hpp"
#include "collectors/perf/perf_results.hpp"

namespace ccdiag::perf {

namespace {

std::vector<std::string> split_ws(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::optional<double> to_double(std::string_view s) {
  if (s.empty() || s == "N/A" || s == "nan" || s == "-nan") return std::nullopt;
  try {
    size_t used = 0;
    const double v = std::stod(std::string(s), &used);
    if (used != s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<int64_t> to_int(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// One column of a result table: which half it belongs to and what it holds.
struct Column {
  enum Field { size, count, type, redop, root, time, algbw, busbw, wrong, error, other } field = other;
  int half = 0;  // 0 out-of-place, 1 in-place
};

std::vector<Column> map_header(const std::vector<std::string>& names) {
  std::vector<Column> cols;
  std::set<Column::Field> seen;
  int half = 0;
  for (const auto& n : names) {
    Column c;
    if (n == "size") c.field = Column::size;
    else if (n == "count") c.field = Column::count;
    else if (n == "type") c.field = Column::type;
    else if (n == "redop") c.field = Column::redop;
    else if (n == "root") c.field = Column::root;
    else if (n == "time" || n == "cputime" || n == "cpu_time") c.field = Column::time;
    else if (n == "algbw") c.field = Column::algbw;
    else if (n == "busbw") c.field = Column::busbw;
    else if (n == "#wrong" || n == "wrong") c.field = Column::wrong;
    else if (n == "error") c.field = Column::error;
    // A second time/algbw/busbw/#wrong opens the in-place half.
    if (c.field == Column::time || c.field == Column::algbw || c.field == Column::busbw || c.field == Column::wrong ||
        c.field == Column::error) {
      if (seen.count(c.field)) {
        half = 1;
        seen.clear();
      }
      seen.insert(c.field);
    }
    c.half = half;
    cols.push_back(c);
  }
  return cols;
}

void fill_row(SizeRow& row, const std::vector<Column>& cols, const std::vector<std::string>& tok) {
  for (size_t i = 0; i < cols.size() && i < tok.size(); ++i) {
    SideResult& side = cols[i].half ? row.ip : row.oop;
    const std::string& t = tok[i];
    switch (cols[i].field) {
      case Column::size: row.size_bytes = to_int(t).value_or(0); break;
      case Column::count: row.count = to_int(t).value_or(0); break;
      case Column::type: row.type = t; break;
      case Column::redop: row.redop = t; break;
      case Column::root: row.root = t; break;
      case Column::time: side.time_us = to_double(t); break;
      case Column::algbw: side.algbw_gbs = to_double(t); break;
      case Column::busbw: side.busbw_gbs = to_double(t); break;
      case Column::wrong:
        if (auto v = to_double(t)) side.wrong = static_cast<int64_t>(*v);
        break;
      case Column::error: side.max_error = to_double(t); break;
      case Column::other: break;
    }
  }
}

// "2.18.1" -> 21801 (NCCL_VERSION_CODE since 2.9).
std::optional<int> nccl_code(std::string_view v) {
  int a = 0, b = 0, c = 0;
  if (std::sscanf(std::string(v).c_str(), "%d.%d.%d", &a, &b, &c) < 2) return std::nullopt;
  return a * 10000 + b * 100 + c;
}

std::string base_name(std::string_view p) {
  const auto s = p.find_last_of('/');
  return std::string(s == std::string_view::npos ? p : p.substr(s + 1));
}

const char* const kKeptEnv[] = {"NCCL_ALGO", "NCCL_PROTO", "NCCL_NVLS_ENABLE", "NCCL_IB_HCA", "NCCL_TESTS_SPLIT",
                                "NCCL_TESTS_SPLIT_MASK", "NCCL_COLLNET_ENABLE", "NCCL_NET_GDR_LEVEL"};

}  // namespace

std::vector<std::string> PerfRun::hosts() const {
  std::vector<std::string> out;
  for (const auto& d : devices)
    if (std::find(out.begin(), out.end(), d.host) == out.end()) out.push_back(d.host);
  return out;
}

std::string collective_from_program(std::string_view prog) {
  std::string b = base_name(prog);
  static const char* const kNames[] = {"all_reduce", "all_gather", "reduce_scatter", "alltoallv", "alltoall",
                                       "sendrecv",   "broadcast",  "hypercube",      "gather",    "scatter",
                                       "reduce"};
  for (const char* n : kNames)
    if (b.find(n) != std::string::npos) return n;
  return "";
}

Result<PerfRun> parse_nccl_tests_text(std::string_view text, const std::string& file) {
  PerfRun run;
  run.file = file;
  run.tool = Tool::nccl_tests;
  run.format = "nccl-tests text";
  static const std::regex kDevice(
      R"(^#?\s*Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*?)\s*$)");
  std::vector<Column> cols;
  int lineno = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t nl = text.find('\n', pos);
    std::string_view raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++lineno;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    const std::string_view line = trim(raw);
    if (line.empty()) continue;
    const bool hashed = line.front() == '#';
    const std::string_view body = trim(hashed ? line.substr(1) : line);

    if (line.find("Test failure") != std::string_view::npos || line.find("Test timeout") != std::string_view::npos) {
      run.failures.push_back(Breadcrumb{std::string(line), lineno});
      continue;
    }
    if (body.rfind("nccl-tests version ", 0) == 0) {
      const auto t = split_ws(body);
      if (t.size() >= 3) run.version = t[2];
      for (const auto& x : t)
        if (x.rfind("nccl-library=", 0) == 0) {
          if (auto v = to_int(std::string_view(x).substr(13))) run.nccl_version = static_cast<int>(*v);
        }
      continue;
    }
    if (body.rfind("Collective test starting:", 0) == 0) {
      run.collective = collective_from_program(trim(body.substr(25)));
      continue;
    }
    if (!hashed && line.rfind("NCCL version ", 0) == 0) {
      if (!run.nccl_version) {
        std::string v(trim(line.substr(13)));
        run.nccl_version = nccl_code(v.substr(0, v.find('+')));
      }
      continue;
    }
    if (body.rfind("nThread ", 0) == 0) {
      const auto t = split_ws(body);
      for (size_t i = 0; i + 1 < t.size(); ++i) {
        if (t[i] == "nThread") run.nthreads_param = static_cast<int>(to_int(t[i + 1]).value_or(0));
        if (t[i] == "nGpus") run.ngpus_param = static_cast<int>(to_int(t[i + 1]).value_or(0));
      }
      continue;
    }
    if (body.rfind("Rank ", 0) == 0) {
      std::cmatch m;
      const std::string b(body);
      // Numbers past int (a mangled or hostile line) make the line no device
      // line; std::stoi would throw out of the parser (found by perf_results_fuzz).
      auto small = [](const std::optional<int64_t>& v) { return v && *v >= 0 && *v <= INT32_MAX; };
      std::optional<int64_t> rank, group, pid, device;
      if (std::regex_match(b.c_str(), m, kDevice)) {
        rank = to_int(m[1].str()), pid = to_int(m[3].str()), device = to_int(m[5].str());
        group = m[2].matched ? to_int(m[2].str()) : std::optional<int64_t>(0);
      }
      if (small(rank) && small(group) && pid && small(device)) {
        DeviceLine d;
        d.rank = static_cast<int>(*rank);
        d.group = static_cast<int>(*group);
        d.pid = *pid;
        d.host = m[4].str();
        d.device = static_cast<int>(*device);
        d.bus = m[6].str();
        d.name = m[7].str();
        // MPI jobs of old builds print the device list once per process: keep one line per rank and host.
        const bool dup = std::any_of(run.devices.begin(), run.devices.end(),
                                     [&](const DeviceLine& o) { return o.rank == d.rank && o.host == d.host && o.pid == d.pid; });
        if (!dup) run.devices.push_back(std::move(d));
      }
      continue;
    }
    if (body.rfind("Out of bounds values", 0) == 0) {
      const auto c = body.find(':');
      if (c != std::string_view::npos) {
        const auto t = split_ws(body.substr(c + 1));
        if (!t.empty()) run.out_of_bounds = run.out_of_bounds.value_or(0) + to_int(t[0]).value_or(0);
      }
      continue;
    }
    if (body.rfind("Avg bus bandwidth", 0) == 0) {
      const auto c = body.find(':');
      if (c != std::string_view::npos) {
        const auto t = split_ws(body.substr(c + 1));
        if (!t.empty()) run.avg_busbw = to_double(t[0]);
      }
      continue;
    }
    auto tok = split_ws(body);
    if (tok.size() >= 3 && tok[0] == "size" && tok[1] == "count") {
      cols = map_header(tok);
      for (const auto& t : tok)
        if (t == "#wrong" || t == "error") run.error_column = t;
      continue;
    }
    if (hashed || cols.empty() || tok.size() < 4 || !all_digits(tok[0]) || !all_digits(tok[1])) continue;
    SizeRow row;
    row.line = lineno;
    fill_row(row, cols, tok);
    if (row.oop.present() || row.ip.present()) run.rows.push_back(std::move(row));
  }
  if (run.rows.empty()) {
    if (!run.failures.empty())
      return make_error("nccl-tests run failed before printing results: " + run.failures.front().text, file);
    return make_error("no nccl-tests result table found (expected a '# size count type ...' header and rows)", file);
  }
  if (run.collective.empty()) run.collective = collective_from_program(base_name(file));
  if (run.collective.empty())
    run.notes.push_back("collective not printed (nccl-tests < 2.17) and not in the file name; busbw is not judged");
  return run;
}

namespace {
Result<PerfRun> parse_nccl_tests_json_doc(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object() || !j.contains("results") || !j["results"].is_array())
    return make_error("not an nccl-tests -J file (no results[])", file);
  PerfRun run;
  run.file = file;
  run.tool = Tool::nccl_tests;
  run.format = fmt::format("nccl-tests json v{}", j.value("version", 0));
  run.error_column = "#wrong";
  if (j.contains("nccl_version") && j["nccl_version"].is_number_integer()) run.nccl_version = j["nccl_version"].get<int>();
  if (j.contains("args") && j["args"].is_array() && !j["args"].empty() && j["args"][0].is_string())
    run.collective = collective_from_program(j["args"][0].get<std::string>());
  if (run.collective.empty()) run.collective = collective_from_program(base_name(file));
  // The env array is rank 0's whole environment: keep only the few NCCL knobs that change what busbw means.
  if (j.contains("env") && j["env"].is_array())
    for (const auto& e : j["env"])
      if (e.is_string()) {
        const std::string s = e.get<std::string>();
        for (const char* k : kKeptEnv)
          if (s.rfind(std::string(k) + "=", 0) == 0) run.nccl_env.push_back(s);
      }
  auto num = [](const nlohmann::json& o, const char* k) -> std::optional<double> {
    if (!o.is_object() || !o.contains(k)) return std::nullopt;
    const auto& v = o[k];
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) return to_double(trim(v.get<std::string>()));
    return std::nullopt;
  };
  const nlohmann::json cfg = j.value("config", nlohmann::json::object());
  run.ngpus_param = static_cast<int>(num(cfg, "ngpus").value_or(0));
  run.nthreads_param = static_cast<int>(num(cfg, "nthreads").value_or(0));
  if (cfg.contains("devices") && cfg["devices"].is_array())
    for (const auto& d : cfg["devices"]) {
      DeviceLine dl;
      dl.rank = static_cast<int>(num(d, "rank").value_or(0));
      dl.group = static_cast<int>(num(d, "group").value_or(0));
      dl.pid = static_cast<int64_t>(num(d, "pid").value_or(0));
      dl.host = d.value("hostname", "");
      dl.device = static_cast<int>(num(d, "device").value_or(0));
      dl.bus = d.value("device_hex", "");
      dl.name = d.value("device_info", "");
      run.devices.push_back(std::move(dl));
    }
  auto side = [&](const nlohmann::json& o) {
    SideResult s;
    if (!o.is_object()) return s;
    s.time_us = num(o, "time");
    if (!s.time_us) s.time_us = num(o, "cpu_time");
    s.algbw_gbs = num(o, "alg_bw");
    s.busbw_gbs = num(o, "bus_bw");
    if (auto w = num(o, "nwrong")) s.wrong = static_cast<int64_t>(*w);
    return s;
  };
  for (const auto& r : j["results"]) {
    if (!r.is_object()) continue;
    SizeRow row;
    row.size_bytes = static_cast<int64_t>(num(r, "size").value_or(0));
    row.count = static_cast<int64_t>(num(r, "count").value_or(0));
    row.type = r.value("type", "");
    row.redop = r.value("redop", "");
    row.root = r.contains("root") && r["root"].is_string() ? std::string(trim(r["root"].get<std::string>()))
               : r.contains("root") && r["root"].is_number() ? std::to_string(r["root"].get<int64_t>())
                                                              : "";
    row.oop = side(r.value("out_of_place", nlohmann::json::object()));
    row.ip = side(r.value("in_place", nlohmann::json::object()));
    if (row.oop.present() || row.ip.present()) run.rows.push_back(std::move(row));
  }
  if (j.contains("out_of_bounds")) {
    if (auto c = num(j["out_of_bounds"], "count")) run.out_of_bounds = static_cast<int64_t>(*c);
  }
  for (const char* k : {"average_bus_bandwidth", "average_bus_bandwidith"})
    if (j.contains(k)) {
      run.avg_busbw = num(j[k], "bandwidth");
      if (!run.avg_busbw) run.avg_busbw = num(j[k], "bandwidith");
    }
  if (j.contains("errors") && j["errors"].is_array())
    for (const auto& e : j["errors"])
      if (e.is_string() && !e.get<std::string>().empty()) run.failures.push_back(Breadcrumb{e.get<std::string>(), 0});
  if (run.rows.empty()) return make_error("nccl-tests JSON has no result rows", file);
  return run;
}
}  // namespace

Result<PerfRun> parse_results(std::string_view text, const std::string& file) {
  std::string_view t = trim(text);
  if (t.empty()) return make_error("empty file", file);
  if (t.front() == '{') {
    if (t.find("\"test_info\"") != std::string_view::npos) return parse_perftest_json(text, file);
    return parse_nccl_tests_json(text, file);
  }
  if (t.find("#bytes") != std::string_view::npos &&
      (t.find("#iterations") != std::string_view::npos || t.find(" Test") != std::string_view::npos))
    return parse_perftest_text(text, file);
  return parse_nccl_tests_text(text, file);
}

Result<PerfRun> parse_nccl_tests_json(std::string_view text, const std::string& file) {
  return read_json_result(text, file, [&](const nlohmann::json& j) { return parse_nccl_tests_json_doc(j, file); });
}

}  // namespace ccdiag::perf
