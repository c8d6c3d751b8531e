// Decoding one ncclComm (and what hangs off it) with a layout, read-only.
// Every pointer is followed only after a bounds/sanity check; every list walk
// is bounded and cycle-checked; a read that fails (freed, not dumped) leaves
// the field unknown and adds a note instead of failing the comm.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collectors/nccl/attach/attach_model.hpp"
#include "collectors/nccl/attach/layout.hpp"
#include "collectors/nccl/attach/target.hpp"

namespace ccdiag::nccl::attach {

struct DecodeContext {
  const AttachTarget* target = nullptr;
  const NcclLayout* layout = nullptr;
  std::optional<std::set<uint64_t>> ras_list;  // comm pointers in NCCL's RAS list, when readable
  size_t max_proxy_ops = 1024;
  size_t max_peers = 1 << 16;
};

// Why a magic-pair candidate is not a live comm (poisoned, out-of-range
// identity); empty when it is acceptable.
std::string reject_reason(const DecodeContext& ctx, uint64_t addr);

// One read of the comm at `addr`. Never fails: unknown parts are left unset.
CommState decode_comm(const DecodeContext& ctx, uint64_t addr);

// Reads until two consecutive reads agree (at most `attempts`), so a comm
// changing under the read (live) is not reported half-updated.
CommState decode_comm_stable(const DecodeContext& ctx, uint64_t addr, int attempts = 4);

// NCCL's classification of a sub (proxy.cc dumpProxyState): send I G S D, recv I R F G D.
void classify(ProxySub& s, int nccl_steps);

// Marks each sub of `later` as moving or not against `earlier` (same op and
// sub); subs absent from `earlier` are moving (new work).
void compare_samples(const CommState& earlier, CommState& later);

// Compact form of the fields two reads must agree on.
std::string comm_digest(const CommState& c);

}  // namespace ccdiag::nccl::attach
