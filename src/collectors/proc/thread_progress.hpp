// Whether a process's main thread is moving: two reads of its scheduler
// counters a short window apart, taken BEFORE any ptrace stop (a stop is a
// voluntary context switch itself and would count as progress).
//
// Host paths read, per process: /proc/PID/task/PID/status
// (voluntary_ctxt_switches, nonvoluntary_ctxt_switches) and
// /proc/PID/task/PID/stat (utime, stime).
//
// Why: one stack capture is a snapshot. In a running job the ranks pass
// through their collectives all the time, so a snapshot can catch three
// ranks waiting in all_reduce and one computing, the shape of a hang. A rank
// blocked in a hung collective sleeps on one futex/poll and does not wake
// (measured on real gloo jobs: 0 wake-ups in 1.5 s); a rank of a running job
// wakes every time a collective completes (~40 per second in a small CPU job).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "ccdiag/stack_model.hpp"
#include "ccdiag/sysroot.hpp"

namespace ccdiag {

struct ThreadCounters {
  uint64_t voluntary = 0;     // voluntary_ctxt_switches: the thread slept and was woken
  uint64_t nonvoluntary = 0;  // preempted while runnable
  uint64_t cpu_ticks = 0;     // utime + stime, clock ticks
};

// The main thread's counters (TID == PID); nullopt when the process is gone
// or the files cannot be read.
std::optional<ThreadCounters> read_main_thread_counters(const SysRoot& root, int64_t pid);

// Reads every pid's counters, waits `window`, reads again. Pids that could
// not be read at both ends are absent from the result.
std::map<int64_t, ThreadProgress> measure_main_thread_progress(const SysRoot& root, const std::vector<int64_t>& pids,
                                                              std::chrono::milliseconds window);

}  // namespace ccdiag
