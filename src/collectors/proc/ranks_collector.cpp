#include "collectors/proc/ranks_collector.hpp"

#include "collectors/proc/rank_discovery.hpp"
#include "collectors/stacks/stacks.hpp"

namespace ccdiag {

CollectorOutput collect_ranks(const CollectContext& ctx) {
  CollectorOutput out;
  const auto d = discover_ranks(ctx.root);
  for (const auto& r : d.ranks) {
    Evidence e;
    e.kind = "ranks.process";
    e.subject.host = ctx.host;
    e.subject.pid = r.pid;
    e.subject.rank = r.rank;
    if (r.gpus.size() == 1) e.subject.gpu = std::to_string(r.gpus[0]);
    e.provenance.source = "/proc/" + std::to_string(r.pid);
    e.data = to_json(r);
    out.evidence.push_back(std::move(e));
  }
  if (d.unreadable > 0)
    out.unchecked.push_back(Unchecked{"rank discovery", UncheckedState::unavailable, std::to_string(d.unreadable) +
                                                            " process(es) could not be read (environ/maps need "
                                                            "root or CAP_SYS_PTRACE)"});
  return out;
}

CollectorOutput collect_rank_stacks(const CollectContext& ctx) {
  CollectorOutput out;
  if (!ctx.root.is_live()) {
    // A captured tree has no processes to attach to; say so only when it
    // holds ranks whose stacks a live run would have taken.
    const auto n = discover_ranks(ctx.root).ranks.size();
    if (n > 0)
      out.unchecked.push_back(Unchecked{"rank stacks", UncheckedState::skipped, std::to_string(n) +
                                                           " rank(s) in a --root tree, no live process to attach to"});
    return out;
  }
  StacksOptions so;
  for (const auto& r : discover_ranks(ctx.root).ranks) {
    if (r.dead()) continue;  // a zombie has no threads to stop: ranks.process reports it as dead
    Evidence e;
    e.kind = "stacks.process";
    e.subject.host = ctx.host;
    e.subject.pid = r.pid;
    e.subject.rank = r.rank;
    e.provenance.source = "ptrace " + std::to_string(r.pid);
    auto s = collect_process_stacks(ctx.root, r.pid, so);
    if (!s) {
      e.availability = Availability::error(s.error().one_line());
      out.unchecked.push_back(Unchecked{"stacks of pid " + std::to_string(r.pid), UncheckedState::error, s.error().one_line()});
    } else {
      s->rank = r.rank;
      s->host = ctx.host;
      e.data = *s;
    }
    out.evidence.push_back(std::move(e));
  }
  return out;
}

}  // namespace ccdiag
