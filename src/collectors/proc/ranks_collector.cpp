#include "collectors/proc/ranks_collector.hpp"

#include "collectors/proc/rank_discovery.hpp"
#include "collectors/proc/thread_progress.hpp"
#include "collectors/stacks/stacks.hpp"

namespace ccdiag {

namespace {
// Long enough for a running job's ranks to wake a few times (a collective
// completes every few ms to a few hundred ms), short beside the capture.
constexpr std::chrono::milliseconds kProgressWindow{400};
}  // namespace

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
  const auto ranks = discover_ranks(ctx.root).ranks;
  // Whether each rank is moving, read before any ptrace stop (a stop counts
  // as a wake-up): the census must not read a running job's snapshot as a
  // hang. A short share of the budget.
  std::vector<int64_t> live_pids;
  for (const auto& r : ranks)
    if (!r.dead()) live_pids.push_back(r.pid);
  auto window = kProgressWindow;
  if (ctx.deadline != std::chrono::steady_clock::time_point::max())
    window = std::min(window, std::chrono::duration_cast<std::chrono::milliseconds>(
                                  (ctx.deadline - std::chrono::steady_clock::now()) / 10));
  const auto progress = live_pids.size() >= 2 && window.count() > 0
                            ? measure_main_thread_progress(ctx.root, live_pids, window)
                            : std::map<int64_t, ThreadProgress>{};
  for (const auto& r : ranks) {
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
      if (auto it = progress.find(r.pid); it != progress.end()) s->progress = it->second;
      e.data = *s;
    }
    out.evidence.push_back(std::move(e));
  }
  return out;
}

}  // namespace ccdiag
