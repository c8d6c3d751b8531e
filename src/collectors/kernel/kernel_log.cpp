#include "collectors/kernel/kernel_log.hpp"

#include <nlohmann/json.hpp>

#include "collectors/kernel/xid.hpp"

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
  KernelLogParse out;
  int64_t lineno = 0;
  size_t xids = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++lineno;
    ++out.lines;
    if (raw.empty()) continue;
    bool bad = false;
    const std::string msg = kernel_line_message(raw, &bad);
    if (bad) {
      ++out.skipped;
      continue;
    }
    Provenance prov{source, lineno, msg.substr(0, 300)};
    if (auto x = parse_xid_line(msg)) {
      ++xids;
      const XidInfo* info = find_xid(x->xid);
      Finding f;
      f.id = "kernel.xid";
      f.layer = Layer::hardware;
      f.severity = (info && info->catalogue_cause[0] != '\0' && info->weight >= 10) ? Severity::critical
                   : Severity::warning;
      f.role = (info && info->catalogue_cause[0] != '\0') ? FindingRole::primary : FindingRole::context;
      f.summary = "Xid " + std::to_string(x->xid) + " on GPU " + x->pci + ": " +
                  (info ? info->name : "unknown Xid") + (x->message.empty() ? "" : " (" + x->message + ")");
      if (!host.empty()) f.subject.host = host;
      f.subject.gpu = x->pci + ".0";  // Xid prints no function; NVIDIA GPUs are function 0
      if (x->pid) f.subject.pid = *x->pid;
      f.provenance.push_back(prov);
      f.order = lineno;
      f.fields = {{"xid", x->xid}, {"pci", x->pci}, {"message", x->message}};
      if (info) {
        f.fields["meaning"] = info->name;
        f.fields["likely_cause"] = info->cause;
        f.fields["action"] = info->action;
        if (info->catalogue_cause[0] != '\0')
          f.supports.push_back(CauseSupport{info->catalogue_cause, info->weight});
      }
      if (x->gpu_instance) f.fields["gpu_instance"] = *x->gpu_instance;
      if (!x->process_name.empty()) f.fields["process"] = x->process_name;
      out.set.findings.push_back(std::move(f));
    } else if (auto bdf = parse_fell_off_bus_line(msg)) {
      Finding f;
      f.id = "kernel.gpu_fell_off_bus";
      f.layer = Layer::hardware;
      f.severity = Severity::critical;
      f.summary = "GPU " + *bdf + " has fallen off the bus";
      if (!host.empty()) f.subject.host = host;
      f.subject.gpu = *bdf;
      f.provenance.push_back(prov);
      f.order = lineno;
      f.fields = {{"pci", *bdf}};
      f.supports.push_back(CauseSupport{"gpu_fell_off_bus", 200});
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
