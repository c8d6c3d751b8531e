// Kernel log collector: the ring buffer (/dev/kmsg) or the file given with
// --kernel-log, kept whole (newest 8 MiB) as raw/kernel.log. Findings are
// derived from it at diagnose time (collectors/kernel/kernel_log.hpp).

#include <algorithm>

#include "collectors/kernel/kernel_log_collector.hpp"
#include "collectors/kernel/kernel_log_window.hpp"
#include "sys/journal.hpp"
#include "sys/kmsg.hpp"
#include "sys/untrusted_file.hpp"

namespace ccdiag {

namespace {
constexpr size_t kMaxKernelLog = 8u << 20;
}

namespace {
CollectorOutput collect_kernel_log_unwindowed(const CollectContext& ctx, const KernelLogOptions& opts) {
  CollectorOutput out;
  Evidence e;
  e.kind = "kernel.source";
  e.subject.host = ctx.host;
  if (ctx.kernel_log_file) {
    // The bounded reader: a FIFO or device is refused (it would block past
    // --timeout or never end), and only the newest 8 MiB are read: a 1.5 GB
    // kern.log is never held whole.
    e.provenance.source = *ctx.kernel_log_file;
    auto tail = read_untrusted_tail(*ctx.kernel_log_file, kMaxKernelLog, *ctx.kernel_log_file);
    if (!tail) {
      e.availability = Availability::error("cannot read --kernel-log: " + tail.error().one_line());
      out.unchecked.push_back(Unchecked{"kernel log", UncheckedState::error, tail.error().one_line()});
      out.evidence.push_back(std::move(e));
      return out;
    }
    std::string text = std::move(tail->text);
    e.data["bytes"] = text.size();
    if (tail->cut) e.data["file_bytes"] = tail->file_bytes;
    out.raw.emplace_back("kernel.log", std::move(text));
  } else if (ctx.root.is_live()) {
    e.provenance.source = "/dev/kmsg";
    auto dump = read_kmsg("/dev/kmsg", kMaxKernelLog);
    if (!dump) {
      // No /dev/kmsg (container, dmesg_restrict): the journal keeps the kernel's messages too.
      // Within this collector's budget (--timeout), at most 3 s.
      auto wait = std::chrono::milliseconds(3000);
      if (ctx.deadline != std::chrono::steady_clock::time_point::max()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(ctx.deadline - std::chrono::steady_clock::now());
        wait = std::clamp(left * 8 / 10, std::chrono::milliseconds(10), wait);
      }
      auto journal = read_journal_kernel(opts.since_epoch_s, wait, kMaxKernelLog);
      if (journal) {
        e.provenance.source = "journalctl -k -o json -b";
        e.data["bytes"] = journal->size();
        e.data["kmsg_error"] = dump.error().one_line();
        out.raw.emplace_back("kernel.log", std::move(*journal));
        out.evidence.push_back(std::move(e));
        return out;
      }
      e.availability = Availability::unavailable(dump.error().one_line() + "; " + journal.error().one_line());
      out.unchecked.push_back(Unchecked{"kernel log", UncheckedState::unavailable, dump.error().one_line() + "; " +
                                                          journal.error().one_line()});
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
    out.unchecked.push_back(Unchecked{"kernel log", UncheckedState::unavailable, "no dev/kmsg or var/log/kern.log under --root; pass --kernel-log FILE"});
  }
  out.evidence.push_back(std::move(e));
  return out;
}

}  // namespace

CollectorOutput collect_kernel_log(const CollectContext& ctx) { return collect_kernel_log(ctx, {}); }

CollectorOutput collect_kernel_log(const CollectContext& ctx, const KernelLogOptions& opts) {
  CollectorOutput out = collect_kernel_log_unwindowed(ctx, opts);
  if (!opts.since_epoch_s) return out;
  const auto boot = boot_time_from_proc_stat(ctx.root.read_file("/proc/stat", 1 << 20).value_or(""));
  for (auto& [path, text] : out.raw) {
    if (path != "kernel.log") continue;
    auto w = filter_kernel_log_since(text, *opts.since_epoch_s, boot);
    text = std::move(w.text);
    for (auto& e : out.evidence) {
      if (e.kind != "kernel.source") continue;
      e.data["since_epoch_s"] = *opts.since_epoch_s;
      e.data["window"] = {{"kept", w.kept}, {"dropped", w.dropped}, {"untimed_kept", w.untimed},
                          {"boot_time_known", boot.has_value()}};
    }
  }
  return out;
}

}  // namespace ccdiag
