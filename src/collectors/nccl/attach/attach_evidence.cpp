#include "collectors/nccl/attach/attach_evidence.hpp"

#include <fmt/format.h>

#include <optional>
#include <thread>

#include "collectors/nccl/attach/attach.hpp"
#include "collectors/nccl/attach/attach_analysis.hpp"
#include "collectors/proc/rank_discovery.hpp"

namespace ccdiag::nccl::attach {

Evidence to_evidence(const ProcessAttach& p) {
  Evidence e;
  e.kind = "nccl.attach";
  if (!p.host.empty()) e.subject.host = p.host;
  if (p.pid > 0) e.subject.pid = p.pid;
  if (p.comms.size() == 1) {
    e.subject.rank = p.comms.front().rank;
    e.subject.comm = p.comms.front().hash_hex();
  }
  e.provenance.source = p.kind == "core" ? p.source : fmt::format("/proc/{}/mem", p.pid);
  e.provenance.excerpt = p.version_string;
  if (p.status == "ok" || p.status == "no_nccl" || p.status == "no_comm") {
    e.availability = Availability::ok();
  } else {
    e.availability = Availability::unavailable(p.reason);
  }
  e.data = to_json(p);
  return e;
}

CollectorOutput collect_nccl_attach(const CollectContext& ctx) {
  CollectorOutput out;
  const auto ranks = discover_ranks(ctx.root);
  if (!ctx.root.is_live()) {
    // A captured tree has no process memory; say so only when it holds NCCL ranks.
    size_t n = 0;
    for (const auto& r : ranks.ranks) n += r.nccl_path.empty() ? 0 : 1;
    if (n > 0)
      out.unchecked.push_back({"NCCL attach", UncheckedState::skipped, std::to_string(n) +
                                                  " NCCL rank(s) in a --root tree, no process memory to read"});
    return out;
  }
  AttachOptions o;
  o.samples = 2;
  o.interval_s = 0.3;
  o.host = ctx.host;
  o.limits.max_bytes = 16ULL << 30;
  o.limits.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(4);
  // Ranks are read concurrently: each waits `interval_s` between its two
  // samples, and eight ranks in a row would spend the collector's budget sleeping.
  struct Slot {
    int64_t pid = 0;
    std::optional<ProcessAttach> result;
    std::string error;
  };
  std::vector<Slot> slots;
  for (const auto& r : ranks.ranks)
    if (!r.nccl_path.empty()) slots.push_back({r.pid, std::nullopt, ""});
  std::vector<std::thread> workers;
  for (auto& slot : slots) {
    workers.emplace_back([&slot, &ctx, o] {
      auto t = open_live_target(ctx.root, static_cast<pid_t>(slot.pid));
      if (!t) {
        slot.error = t.error().one_line();
        return;
      }
      slot.result = attach_target(*t, o);
    });
  }
  for (auto& w : workers) w.join();
  for (auto& slot : slots) {
    if (!slot.result) {
      out.unchecked.push_back({fmt::format("NCCL attach pid {}", slot.pid), UncheckedState::error, slot.error});
      continue;
    }
    const ProcessAttach& p = *slot.result;
    if (p.status != "ok" && p.status != "no_comm")
      out.unchecked.push_back({fmt::format("NCCL attach pid {}", slot.pid), UncheckedState::unavailable, p.status + ": " + p.reason});
    out.evidence.push_back(to_evidence(p));
  }
  return out;
}

void append_attach_findings(EvidenceSet& set) {
  std::vector<ProcessAttach> procs;
  for (const auto& e : set.evidence)
    if (e.kind == "nccl.attach" && e.availability.is_ok()) procs.push_back(process_attach_from_json(e.data));
  if (procs.empty()) return;
  for (auto& f : attach_findings(analyze_attach(procs))) set.findings.push_back(std::move(f));
}

}  // namespace ccdiag::nccl::attach
