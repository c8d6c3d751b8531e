// perftest output parsers (reference perf-and-fleet.md §4.2). The result
// header's names carry the unit (`BW average[Gb/sec]`, `[MB/sec]` before
// perftest 24.07, `[MiB/sec]` after; the MB label always meant MiB/s), so
// bandwidth is converted to Gb/s from the header, never assumed.
#include <cctype>
#include <cmath>
#include <regex>

#include <nlohmann/json.hpp>

#include "collectors/perf/json_input.hpp"
#include "collectors/perf/perf_results.hpp"

namespace ccdiag::perf {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

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

std::optional<double> to_double(const std::string& s) {
  try {
    size_t used = 0;
    const double v = std::stod(s, &used);
    if (used != s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

// A count read as a double, as an int64 only when it fits (a hostile or
// corrupted table may hold 1e300: casting that is undefined behaviour).
std::optional<int64_t> to_count(double v) {
  if (!(v >= 0) || v > 9.0e18) return std::nullopt;
  return static_cast<int64_t>(v);
}

// Header tokens -> column names: "BW" "peak[Gb/sec]" is one column, so is "99%" "percentile[usec]".
std::vector<std::string> header_names(const std::vector<std::string>& tok) {
  std::vector<std::string> out;
  for (size_t i = 0; i < tok.size(); ++i) {
    const std::string& t = tok[i];
    if ((t == "BW" || t == "tps" || (!t.empty() && t.back() == '%')) && i + 1 < tok.size()) {
      out.push_back(t + " " + tok[i + 1]);
      ++i;
    } else {
      out.push_back(t);
    }
  }
  return out;
}

// MiB/s -> Gb/s (10^9 bits): x * 2^20 * 8 / 10^9.
constexpr double kMiBpsToGbps = 1048576.0 * 8.0 / 1e9;

std::string program_for(const std::string& title) {
  std::string op = title.rfind("RDMA_Write", 0) == 0 ? "ib_write"
                   : title.rfind("RDMA_Read", 0) == 0 ? "ib_read"
                   : title.rfind("Send", 0) == 0      ? "ib_send"
                   : title.rfind("Atomic", 0) == 0    ? "ib_atomic"
                                                      : "";
  if (op.empty()) return "";
  return op + (title.find("Latency") != std::string::npos ? "_lat" : "_bw");
}

}  // namespace

Result<PerfRun> parse_perftest_text(std::string_view text, const std::string& file) {
  PerfRun run;
  run.file = file;
  run.tool = Tool::perftest;
  run.format = "perftest text";
  static const std::regex kDevice(R"(Device\s*:\s*(\S+))");
  static const std::regex kQps(R"(Number of qps\s*:\s*(\d+))");
  static const std::regex kLink(R"(Link type\s*:\s*(\S+))");
  std::vector<std::string> names;
  bool in_table = false;
  int lineno = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t nl = text.find('\n', pos);
    std::string_view raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++lineno;
    const std::string line(trim(raw));
    if (line.empty()) continue;
    std::smatch m;
    if (run.test_name.empty() && (line.find(" BW Test") != std::string::npos || line.find(" Latency Test") != std::string::npos) &&
        line.find(':') == std::string::npos) {
      run.test_name = line;
      run.collective = program_for(line);
      run.latency_test = line.find("Latency") != std::string::npos;
      run.bidirectional = line.find("Bidirectional") != std::string::npos;
      continue;
    }
    if (std::regex_search(line, m, kDevice) && run.nic.empty()) run.nic = m[1].str();
    if (std::regex_search(line, m, kQps)) {
      // std::stoi throws on a number past int: at most 6 digits are a QP count.
      if (const std::string q = m[1].str(); q.size() <= 6) run.qps = std::stoi(q);
    }
    if (std::regex_search(line, m, kLink)) run.link_type = m[1].str();
    if (line.find("BW peak won't be measured") != std::string::npos)
      run.notes.push_back("duration mode (-D): BW peak not measured, judged on BW average");
    if (line.rfind("#bytes", 0) == 0) {
      names = header_names(split_ws(line));
      in_table = true;
      for (const auto& n : names) {
        const auto lb = n.find('['), rb = n.find(']');
        if (n.rfind("BW", 0) == 0 && lb != std::string::npos && rb != std::string::npos)
          run.bw_unit = n.substr(lb + 1, rb - lb - 1);
      }
      continue;
    }
    if (line.rfind("---", 0) == 0) {
      in_table = false;
      continue;
    }
    if (!in_table || !std::isdigit(static_cast<unsigned char>(line[0]))) continue;
    const auto tok = split_ws(line);
    PerftestRow row;
    row.line = lineno;
    const bool gbits = run.bw_unit.find("Gb") != std::string::npos;
    for (size_t i = 0; i < names.size() && i < tok.size(); ++i) {
      const auto v = to_double(tok[i]);
      if (!v) continue;
      const std::string& n = names[i];
      const double bw = gbits ? *v : *v * kMiBpsToGbps;
      if (n == "#bytes") {
        if (auto c = to_count(*v)) row.size_bytes = *c;
      } else if (n == "#iterations") {
        if (auto c = to_count(*v)) row.iterations = *c;
      }
      else if (n.rfind("BW peak", 0) == 0) row.bw_peak_gbps = bw;
      else if (n.rfind("BW average", 0) == 0) row.bw_avg_gbps = bw;
      else if (n.rfind("MsgRate", 0) == 0) row.msg_rate_mpps = *v;
      else if (n.rfind("t_min", 0) == 0) row.t_min_us = *v;
      else if (n.rfind("t_max", 0) == 0) row.t_max_us = *v;
      else if (n.rfind("t_typical", 0) == 0) row.t_typical_us = *v;
      else if (n.rfind("t_avg", 0) == 0) row.t_avg_us = *v;
      else if (n.rfind("t_stdev", 0) == 0) row.t_stdev_us = *v;
      else if (n.rfind("99% ", 0) == 0) row.p99_us = *v;
      else if (n.rfind("99.9% ", 0) == 0) row.p999_us = *v;
    }
    run.pt_rows.push_back(row);
  }
  if (run.pt_rows.empty()) return make_error("no perftest result rows found (expected a '#bytes #iterations ...' table)", file);
  if (run.collective.empty()) {
    // No title (output cut to the table): the program name in the file name, else the table's kind.
    static const std::regex kProg(R"(ib_(write|read|send|atomic)_(bw|lat))");
    std::smatch pm;
    if (std::regex_search(file, pm, kProg)) run.collective = pm[0].str();
    run.latency_test = run.pt_rows.front().t_avg_us.has_value() || run.pt_rows.front().t_typical_us.has_value();
  }
  if (run.collective.empty()) run.collective = run.latency_test ? "perftest_lat" : "perftest_bw";
  return run;
}

namespace {
Result<PerfRun> parse_perftest_json_doc(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object() || !j.contains("test_info") || !j.contains("results") || !j["results"].is_object())
    return make_error("not a perftest --out_json file (test_info and results expected)", file);
  PerfRun run;
  run.file = file;
  run.tool = Tool::perftest;
  run.format = "perftest json";
  const auto& ti = j["test_info"];
  std::string test = ti.value("test", "");
  for (auto& c : test)
    if (c == '_') c = ' ';
  // "RDMA Write BW Test" -> the text title form "RDMA_Write BW Test".
  if (test.rfind("RDMA ", 0) == 0) test[4] = '_';
  run.test_name = test;
  run.collective = program_for(test);
  run.latency_test = test.find("Latency") != std::string::npos || test.find("Lat") != std::string::npos;
  if (ti.contains("Device") && ti["Device"].is_string()) run.nic = ti["Device"].get<std::string>();
  if (ti.contains("Number_of_qps") && ti["Number_of_qps"].is_number()) run.qps = ti["Number_of_qps"].get<int>();
  const auto& r = j["results"];
  auto num = [&](const char* k) -> std::optional<double> {
    if (!r.contains(k)) return std::nullopt;
    if (r[k].is_number()) return r[k].get<double>();
    if (r[k].is_string()) return to_double(std::string(trim(r[k].get<std::string>())));
    return std::nullopt;
  };
  PerftestRow row;
  row.size_bytes = static_cast<int64_t>(num("MsgSize").value_or(0));
  row.iterations = static_cast<int64_t>(num("n_iterations").value_or(0));
  // The JSON carries no unit. An RDMA port runs at >= 10 Gb/s, which is >= 1192 MiB/s:
  // values above 1000 are MiB/s, values below are Gb/s (--report_gbits).
  auto bw = [&](std::optional<double> v) -> std::optional<double> {
    if (!v) return v;
    return *v > 1000.0 ? *v * kMiBpsToGbps : *v;
  };
  row.bw_peak_gbps = bw(num("BW_peak"));
  row.bw_avg_gbps = bw(num("BW_average"));
  if (!row.bw_avg_gbps) row.bw_avg_gbps = bw(num("bw_avg"));
  row.msg_rate_mpps = num("MsgRate");
  row.t_avg_us = num("t_avg");
  row.t_typical_us = num("t_typical");
  row.t_min_us = num("t_min");
  run.bw_unit = "Gb/sec (unit inferred)";
  run.pt_rows.push_back(row);
  if (run.collective.empty()) run.collective = run.latency_test ? "perftest_lat" : "perftest_bw";
  return run;
}

}  // namespace

Result<PerfRun> parse_perftest_json(std::string_view text, const std::string& file) {
  return read_json_result(text, file, [&](const nlohmann::json& j) { return parse_perftest_json_doc(j, file); });
}

}  // namespace ccdiag::perf
