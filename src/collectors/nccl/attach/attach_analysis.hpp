// Cross-rank reading of `nccl attach` results (docs/nccl-attach.md): join the
// communicators of every process and bundle by commHash, and say per comm
// which rank is the culprit and where it is stuck, in the vocabulary of
// collectors/nccl/stuck_state.hpp.
//
// Per rank, in order of precedence:
//   init_hang      initState 7 (ncclInProgress): ncclCommInit* still in bootstrap
//   async_error    asyncResult set (not ncclRemoteError) or the abort flag raised
//   not_enqueued   it issued fewer ops of a function than another rank (seqNumber,
//                  or the proxy collOpCount before 2.23.4): host side
//   network_wait   a send posted to the network and never completed (S)
//   flush_wait     a recv stuck in the GPUDirect flush (F)
//   gpu_wait       a recv whose data arrived is not consumed by the GPU (recv G),
//                  with no send of the rank stuck in the network
//   waiting_on_peer a recv waiting for a peer's data (R; symptom, the peer decides)
//   waiting_on_gpu sends waiting for the GPU to produce (send G; symptom: a hung
//                  kernel or an upstream NVLink/P2P peer, invisible from the host)
//   in_progress / idle
// With two samples only steps that did not move count as stuck.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/finding.hpp"
#include "collectors/nccl/attach/attach_model.hpp"

namespace ccdiag::nccl::attach {

struct AttachRankState {
  int rank = -1;
  bool seen = false;
  std::string host, source;
  int pid = 0;
  std::string where;            // see above, or "not_seen"
  std::optional<int> waits_on;
  std::string detail;
};

struct AttachCommAnalysis {
  uint64_t comm_hash = 0;
  int nranks = 0;
  std::vector<AttachRankState> ranks;  // seen ranks, plus unseen ones of small comms / waited on
  int not_seen = 0;                    // ranks of the comm not found in any input
  std::vector<int> culprits;
  std::string verdict;                 // a where, "peer_missing", or "healthy"
  std::string layer;                   // framework | nccl | transport | hardware | ""
  std::string summary;
};

std::vector<AttachCommAnalysis> analyze_attach(const std::vector<ProcessAttach>& procs);
nlohmann::json to_json(const AttachCommAnalysis& a);
// nccl.attach.<where> findings: culprits primary (with the shared supports), waiting ranks symptoms.
std::vector<Finding> attach_findings(const std::vector<AttachCommAnalysis>& analyses);

}  // namespace ccdiag::nccl::attach
