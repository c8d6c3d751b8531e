// Kernel log collector: the ring buffer (/dev/kmsg) or the file given with
// --kernel-log, kept whole (newest 8 MiB) as raw/kernel.log. Findings are
// derived from it at diagnose time (collectors/kernel/kernel_log.hpp).
#include <fstream>
#include <sstream>

#include "collectors/kernel/kernel_log_collector.hpp"
#include "sys/kmsg.hpp"

namespace ccdiag {

namespace {
constexpr size_t kMaxKernelLog = 8u << 20;
}

CollectorOutput collect_kernel_log(const CollectContext& ctx) {
  CollectorOutput out;
  Evidence e;
  e.kind = "kernel.source";
  e.subject.host = ctx.host;
  if (ctx.kernel_log_file) {
    // A plain blocking read on purpose: the file may sit on a hung network
    // filesystem (or be a FIFO); the probe runner's deadline covers that.
    e.provenance.source = *ctx.kernel_log_file;
    std::ifstream in(*ctx.kernel_log_file, std::ios::binary);
    if (!in) {
      e.availability = Availability::error("cannot open --kernel-log " + *ctx.kernel_log_file);
      out.unchecked.push_back(Unchecked{"kernel log", "error: cannot open " + *ctx.kernel_log_file});
      out.evidence.push_back(std::move(e));
      return out;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (text.size() > kMaxKernelLog) text.erase(0, text.size() - kMaxKernelLog);
    e.data["bytes"] = text.size();
    out.raw.emplace_back("kernel.log", std::move(text));
  } else if (ctx.root.is_live()) {
    e.provenance.source = "/dev/kmsg";
    auto dump = read_kmsg("/dev/kmsg", kMaxKernelLog);
    if (!dump) {
      e.availability = Availability::unavailable(dump.error().one_line());
      out.unchecked.push_back(Unchecked{"kernel log", "unavailable: " + dump.error().one_line()});
      out.evidence.push_back(std::move(e));
      return out;
    }
    e.data["records"] = dump->count;
    e.data["lost"] = dump->lost;
    out.raw.emplace_back("kernel.log", std::move(dump->records));
  } else {
    // A --root tree: a captured kernel log at <root>/dev/kmsg or <root>/var/log/kern.log.
    for (const char* p : {"/dev/kmsg", "/var/log/kern.log", "/var/log/dmesg"}) {
      auto text = ctx.root.read_file(p, kMaxKernelLog);
      if (!text) continue;
      e.provenance.source = p;
      e.data["bytes"] = text->size();
      out.raw.emplace_back("kernel.log", std::move(*text));
      out.evidence.push_back(std::move(e));
      return out;
    }
    e.provenance.source = "/dev/kmsg";
    e.availability = Availability::unavailable("no kernel log in the --root tree");
    out.unchecked.push_back(Unchecked{"kernel log", "unavailable: no dev/kmsg or var/log/kern.log under --root; pass --kernel-log FILE"});
  }
  out.evidence.push_back(std::move(e));
  return out;
}

}  // namespace ccdiag
