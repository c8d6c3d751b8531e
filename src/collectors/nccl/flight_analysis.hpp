// Cross-rank reading of flight-recorder snapshots (docs/nccl.md, `ccdiag nccl dump`):
// per communicator, which op each rank is in, which channel/peer/step it
// waits on and in which state, and which layer the stuck state points to.
//
// Pure: snapshots and "now" in, analysis and Findings out.
//
// Per rank, in order of precedence:
//   not_enqueued       the others enqueued op N of a function, this rank did not -> host side (framework)
//   proxy_stalled      op enqueued, nothing from the proxy thread since (no heartbeat) -> proxy thread (nccl)
//   kernel_not_started op enqueued, proxy alive, no kernel-channel start -> GPU never ran the kernel (nccl)
//   network_wait       a send in SendWait (isend posted, no completion) -> NIC / fabric (transport)
//   flush_wait         a step in RecvFlushWait -> GPUDirect flush / PCIe (hardware)
//   gpu_wait           a step in SendGPUWait / RecvGPUWait -> the rank's GPU (hardware)
//   waiting_on_peer    RecvWait from, or SendPeerWait to, a peer -> symptom; the peer's state decides
//   in_progress / idle nothing stuck for longer than `stuck_after`
// A RecvWait whose sender sits in SendWait is the network pair, not the receiver.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/finding.hpp"
#include "collectors/nccl/flight_recorder.hpp"

namespace ccdiag::nccl {

struct FrWait {
  int channel = 0;
  std::string direction;   // "send" | "recv"
  int peer = -1;
  std::string state;       // step state name
  int step = -1;
  double age_s = 0;        // time in that state
};

struct FrRankState {
  int rank = -1;
  int pid = 0;
  std::string host, source;
  bool has_file = false;
  std::string where;       // not_enqueued | proxy_stalled | kernel_not_started | gpu_wait | flush_wait |
                           // network_wait | waiting_on_peer | in_progress | idle | no_file
  std::optional<FrOp> op;  // the oldest op not completed (the one it is in)
  std::vector<FrWait> waits;
  std::optional<int> waits_on;  // peer rank this rank waits on
  double op_age_s = 0;
  double heartbeat_age_s = -1;
  std::string detail;      // one line for humans
};

struct FrCommAnalysis {
  uint64_t comm_hash = 0;
  std::string comm_name;
  int nranks = 0;
  std::vector<FrRankState> ranks;   // by rank; ranks without a file have has_file=false
  std::string in_flight;           // "AllReduce seq 10" — what the stuck ranks wait in, if any
  std::vector<int> culprits;       // ranks whose own state explains the hang
  std::string layer;               // framework | nccl | transport | hardware | "" (healthy)
  std::string verdict;             // where: not_enqueued, network_wait, ... or "healthy"
  std::string summary;
};

// `now_ns`: wall-clock of the snapshot; `stuck_after_s`: states younger than
// this are "in progress", not stuck.
std::vector<FrCommAnalysis> analyze_flight(const std::vector<FrSnapshot>& snaps, uint64_t now_ns,
                                           double stuck_after_s);

nlohmann::json to_json(const FrCommAnalysis& a);

// Findings (id nccl.fr.<where>) with catalogue `supports`; waiting ranks are
// symptoms, the culprit's state the primary finding.
std::vector<Finding> flight_findings(const std::vector<FrCommAnalysis>& analyses, const std::string& provenance);

}  // namespace ccdiag::nccl
