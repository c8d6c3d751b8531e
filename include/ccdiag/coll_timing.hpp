// Per-rank timing of collectives and of network proxy operations, whatever
// produced it: the ccdiag profiler plugin's rings (flight files) or NCCL INFO
// logs with timestamps. The readers (collectors/perf, collectors/nccl) fill
// these plain records and the slow rank / link analysis (analysis/perf) reads
// them, so neither layer includes the other (docs/architecture.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ccdiag::perf {

// The process a rank runs in: the identity the group tests clear or name
// (a rank number is per communicator; a process is in many communicators).
struct RankProcess {
  std::string host;
  int64_t pid = 0;
  std::optional<int> cuda_dev;  // from the log prefix "[dev]" or the init line
  std::string busid;            // GPU PCI bus id, when an init line printed it
  std::string key() const { return host + ":" + std::to_string(pid); }
};

// One rank's view of one collective.
struct CollTiming {
  RankProcess proc;
  std::string comm;        // communicator identity shared by its ranks ("0x" commHash / commId)
  std::string comm_name;
  int comm_rank = -1, nranks = 0;
  std::string func;        // "AllReduce", ...
  uint64_t seq = 0;        // matches the same collective on every rank of `comm` (with func)
  uint64_t count = 0;      // elements
  std::string dtype;
  std::optional<int64_t> arrive_ns;  // the rank called it (ring: Coll startEvent; log: the COLL line)
  std::optional<int64_t> done_ns;    // its network part completed (ring: last ProxyOp stopped)
  std::string source;                // file
};

// One network proxy operation on one channel in one direction (a ring's channel slot).
struct ChannelTiming {
  RankProcess proc;
  std::string comm;
  int comm_rank = -1, nranks = 0;
  int channel = 0;
  bool send = false;
  int peer = -1;           // comm rank on the other side
  uint64_t op_seq = 0;     // parent collective's seq (distinct ops are distinct samples)
  int64_t start_ns = 0, stop_ns = 0;
  uint64_t bytes = 0;      // last step's size, when NCCL passed it
  std::string source;
};

struct TimingSet {
  std::vector<CollTiming> colls;
  std::vector<ChannelTiming> channels;
  std::vector<std::string> notes;    // what the reader could not use, one line each
};

}  // namespace ccdiag::perf
