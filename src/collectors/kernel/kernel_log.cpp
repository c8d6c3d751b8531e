#include "collectors/kernel/kernel_log.hpp"

#include <nlohmann/json.hpp>

#include "collectors/kernel/xid.hpp"
#include "collectors/logs/analyzer.hpp"

namespace ccdiag {

std::string kernel_line_message(std::string_view line, bool* bad) {
  if (bad) *bad = false;
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  if (!line.empty() && line.front() == '{') {
    // journalctl -o json: MESSAGE is a string, or a byte array when not UTF-8.
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("MESSAGE")) {
      if (bad) *bad = true;
      return {};
    }
    const auto& m = j["MESSAGE"];
    if (m.is_string()) return m.get<std::string>();
    if (m.is_array()) {
      std::string s;
      for (const auto& b : m)
        if (b.is_number_integer()) s.push_back(static_cast<char>(b.get<int>()));
      return s;
    }
    if (bad) *bad = true;
    return {};
  }
  // /dev/kmsg record: "<prio>,<seq>,<usec>,<flags>[,...];text"
  if (!line.empty() && line.front() >= '0' && line.front() <= '9') {
    const size_t semi = line.find(';');
    const size_t comma = line.find(',');
    if (semi != std::string_view::npos && comma != std::string_view::npos && comma < semi &&
        line.substr(0, comma).find_first_not_of("0123456789") == std::string_view::npos)
      return std::string(line.substr(semi + 1));
  }
  // dmesg: "[12345.678901] text"
  if (!line.empty() && line.front() == '[') {
    const size_t close = line.find("] ");
    if (close != std::string_view::npos && close < 24) return std::string(line.substr(close + 2));
  }
  return std::string(line);
}

KernelLogParse parse_kernel_log(std::string_view text, const std::string& source, const std::string& host) {
  // Decode every record to its message (kmsg header, dmesg time, journal
  // JSON), then run the kernel part of the log signature catalogue over the
  // messages: one engine for kernel lines wherever they appear.
  KernelLogParse out;
  std::string messages;
  messages.reserve(text.size());
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++out.lines;
    bool bad = false;
    std::string msg = raw.empty() ? std::string() : kernel_line_message(raw, &bad);
    if (bad) {
      ++out.skipped;
      msg.clear();
    }
    // One output line per input line keeps provenance line numbers true.
    for (char& c : msg)
      if (c == '\n' || c == '\r') c = ' ';
    messages += msg;
    messages += '\n';
  }
  static const std::vector<logs::Signature> kernel_sigs = [] {
    std::vector<logs::Signature> v;
    for (const auto& s : logs::builtin_signatures())
      if (s.id.rfind("kernel.", 0) == 0) v.push_back(s);
    return v;
  }();
  size_t xids = 0;
  // Compiled once per thread and reset per log: compiling the signature set
  // cost about a second per call (one bundle's kernel log, or each input of
  // fuzz/kernel_line_fuzz.cpp, which ran at ~1 exec/s).
  static thread_local auto analyzer = logs::LogAnalyzer::create(kernel_sigs);
  if (analyzer) {
    (*analyzer)->reset();
    (*analyzer)->add_text(messages, source, host);
    logs::LogAnalysis a = (*analyzer)->finish();
    (*analyzer)->reset();  // holds no text of this log past the call
    for (auto& f : a.findings) {
      if (f.id.rfind("logs.", 0) == 0) continue;  // cross-rank summaries belong to the log ingest
      if (f.id == "kernel.xid") xids += f.fields.contains("occurrences") && f.fields["occurrences"].is_number_integer() ? f.fields["occurrences"].get<size_t>() : 1;
      out.set.findings.push_back(std::move(f));
    }
  }
  Evidence e;
  e.kind = "kernel.log";
  if (!host.empty()) e.subject.host = host;
  e.provenance.source = source;
  e.data = {{"lines", out.lines}, {"undecodable_lines", out.skipped}, {"xid_count", xids}};
  out.set.evidence.push_back(std::move(e));
  return out;
}

}  // namespace ccdiag
