// Collectors for `ccdiag collect`: ranks.process (one item per rank found,
// data = docs/ranks.md JSON of the rank) and stacks.process (one item per
// rank, data = one entry of `ccdiag stacks --json` processes[]).
// Both run in probe_runner children; the stacks one is the tracer and
// detaches before it returns.
#pragma once

#include "collectors/collector.hpp"

namespace ccdiag {

CollectorOutput collect_ranks(const CollectContext& ctx);
CollectorOutput collect_rank_stacks(const CollectContext& ctx);

}  // namespace ccdiag
