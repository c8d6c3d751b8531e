// The profiler plugin's flight files in bundles (raw/nccl/fr/) as timings for
// the slow rank / link analysis (docs/perf.md "Profiler rings"), so `diagnose`
// over the bundles of a slow job names what `perf --rings` names. The files
// are also read by the hang analysis of nccl_artifacts; this reads their
// timings only, across all bundles (a job's ranks span hosts).
#pragma once

#include "bundle/bundle.hpp"
#include "ccdiag/coll_timing.hpp"
#include "ccdiag/evidence_set.hpp"

namespace ccdiag {

// Appends the timings of `b`'s raw/nccl/fr/*.fr(.b64) files; unreadable ones are left to the hang
// analysis, which already reports them.
void collect_bundle_rings(const Bundle& b, perf::TimingSet& out);

// Findings of the analysis of all bundles' rings (none when nothing is slow or late).
void append_ring_findings(const perf::TimingSet& rings, EvidenceSet& set);

}  // namespace ccdiag
