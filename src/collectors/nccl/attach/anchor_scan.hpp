// Discovery of communicators without the magic pair (NCCL 2.18–2.20): through
// the proxy threads. On x86_64 glibc a thread's fs_base is its pthread_t, and
// NCCL stores the pthread_t of the progress thread in
// ncclProxyState.progressState.thread (and of the service thread in
// ncclProxyState.thread). So: (1) find heap words equal to a thread's fs_base
// -> candidate ncclProxyState (validated: 0 <= tpRank < tpnRanks); (2) find
// heap words pointing at a candidate proxy state -> candidate comms at
// word - offsetof(ncclComm, proxyState), kept when the identity is sane and
// sharedRes->owner or sharedRes->proxyState confirms them.
//
// Limits: a comm whose proxy threads have not started (hung in bootstrap) has
// no anchor and is not found; fs_base comes from the core's NT_PRSTATUS or,
// live, from a brief ptrace stop (fill_live_thread_pointers).
#pragma once

#include <vector>

#include "collectors/nccl/attach/comm_scan.hpp"
#include "collectors/nccl/attach/layout.hpp"

namespace ccdiag::nccl::attach {

std::vector<uint64_t> find_comms_by_thread_anchor(const AttachTarget& t, const NcclLayout& layout,
                                                  const ScanLimits& limits, ScanStats& stats);

// Live targets: stops every thread for a few milliseconds (PTRACE_SEIZE +
// INTERRUPT, sys/tracee.hpp) to read fs_base, then lets them go. Returns how
// many threads gave one; an error when none could be stopped.
Result<int> fill_live_thread_pointers(AttachTarget& t);

}  // namespace ccdiag::nccl::attach
