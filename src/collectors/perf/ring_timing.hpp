// Collective and channel timings out of the ccdiag profiler plugin's flight
// files (collectors/nccl/flight_recorder.hpp), as the plain records the slow
// rank / link analysis reads (ccdiag/coll_timing.hpp). Pure.
//
// What a ring carries (tools/nccl-profiler-plugin/ccdiag_fr_layout.h): per op
// (the last 128 of a communicator on one rank) the Coll startEvent time
// (arrival), and the stop time of its last ProxyOp (network part done); per
// channel and direction only the LAST ProxyOp (peer, parent op, start, stop).
// Persistence over channels therefore needs several snapshots of the same
// files; a slot read twice with the same parent op is one sample.
// Times are CLOCK_REALTIME_COARSE (one tick: 1-4 ms).
#pragma once

#include <vector>

#include "ccdiag/coll_timing.hpp"
#include "collectors/nccl/flight_recorder.hpp"

namespace ccdiag::perf {

inline constexpr double kRingClockTickMs = 4.0;  // CLOCK_REALTIME_COARSE at HZ=250, the coarsest common tick

// Appends the snapshot's completed or enqueued collectives and completed proxy ops.
void add_ring_timings(const nccl::FrSnapshot& snap, TimingSet& out);

}  // namespace ccdiag::perf
