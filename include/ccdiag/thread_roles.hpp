// Thread roles and the one-line "what this rank is doing" (docs/stacks.md).
// Pure: reads thread names and symbolised frames only. In the model layer
// because both sides use it: the stacks collector names each thread's role
// while it unwinds, and the census groups ranks by their activity.
//
// Roles: main, nccl_proxy_progress, nccl_proxy_service, nccl_ras,
// nccl_bootstrap, pytorch_watchdog, pytorch_heartbeat, dataloader_worker,
// pin_memory, cuda_driver, python, worker (anything else).
// NCCL names its threads ("NCCL Progress", "NCCL Service", "NCCL RAS") only
// when NCCL_SET_THREAD_NAME=1, so frames are checked first; PyTorch names its
// watchdog "pt_nccl_watchdg" and heartbeat monitor "pt_nccl_heartbt".
#pragma once

#include <string>

#include "ccdiag/stack_model.hpp"

namespace ccdiag {

std::string thread_role(const ThreadStack& t, int64_t pid);
void assign_roles(ProcessStacks& p);

// "in cudaStreamSynchronize", "in ncclCommInitRank bootstrap", "in a c10d
// wait", "in recv on a socket", "in a user futex (under lock_pair)",
// "spinning in user code (spin_forever)", ... for the main thread, with the
// innermost application frame in parentheses when it helps.
std::string thread_activity(const ThreadStack& t);
std::string rank_activity(const ProcessStacks& p);

// True when any frame is inside NCCL, a c10d collective/wait or a CUDA
// synchronisation: the thread waits for the collective, not for host code.
bool in_collective_or_sync(const ThreadStack& t);

}  // namespace ccdiag
