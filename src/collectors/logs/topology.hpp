// Per-process NCCL set-up rebuilt from NCCL_DEBUG=INFO lines
// (docs/logs.md): version, comm init (rank, nranks, cudaDev, busId, commHash),
// nNodes, network and NICs, bootstrap interface, NCCL_* environment,
// transport per peer, rings. Also the findings only visible across processes
// (version/env skew, P2P between hosts, nNodes below the host count,
// NCCL_SOCKET_IFNAME without a bootstrap interface).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/evidence.hpp"
#include "ccdiag/finding.hpp"
#include "collectors/logs/captures.hpp"

namespace ccdiag::logs {

struct CommInit {
  std::string ptr;
  int rank = -1, nranks = 0, cuda_dev = -1;
  std::optional<int> nvml_dev;
  std::string busid, comm_id;
  bool complete = false;
  std::optional<int> nnodes, local_ranks, local_rank;
};

struct TransportEdge {
  int from_rank = -1, to_rank = -1;
  std::string from_dev, to_dev, transport;
  // The communicator the ranks belong to (ranks in channel lines are the
  // comm's own): the comm set up last in this process when the line came.
  std::string comm;
};

struct ProcessTopology {
  std::string key, host, source;
  std::optional<int64_t> pid;
  std::optional<int> launcher_rank;
  std::string version, cuda, driver, bootstrap, network, ib_using, socket_using;
  std::map<std::string, std::string> env;
  std::vector<CommInit> comms;
  int current_comm = -1;              // index in comms of the comm whose set-up lines come now
  std::vector<TransportEdge> edges;   // capped
  std::unordered_set<std::string> edge_keys;
  std::vector<std::string> rings;     // capped
  std::optional<int> nranks_legacy;
  std::set<int> devs;
  size_t info_lines = 0;
};

// Which set-up line a signature is (decided once per signature, not per line).
enum class TopoKind { none, version, cuda_driver, bootstrap, env, ib_using, socket_using, network, nranks,
                      comm_init, nodes, transport, ring, other };
TopoKind topo_kind(const std::string& signature_id);

class TopologyBuilder {
 public:
  // One set-up line of process `key` with its named fields (views into the line, used before return).
  void add(std::string_view key, std::string_view host, std::optional<int64_t> pid, std::optional<int> rank,
           std::optional<int> dev, TopoKind kind, const Captures& fields, const std::string& source);

  // Rank of the comm on `dev` in process `key` (largest communicator first).
  std::optional<int> rank_of(const std::string& key, std::optional<int> dev) const;
  // "0000:1b:00.0" for the comm on `dev` (busId decoded), when known.
  std::optional<std::string> bdf_of(const std::string& key, std::optional<int> dev) const;

  // Host of the process whose comm-init line names `rank` (nullopt when none or ambiguous).
  std::optional<std::string> host_of_rank(int rank) const;

  // nccl.topology and nccl.version evidence, one per process.
  std::vector<Evidence> evidence() const;
  // Cross-process findings. `any_error`: some error-severity finding exists.
  std::vector<Finding> derived(bool any_error) const;

  bool empty() const { return procs_.empty(); }
  const std::map<std::string, ProcessTopology, std::less<>>& processes() const { return procs_; }

 private:
  std::map<std::string, ProcessTopology, std::less<>> procs_;
  std::string key_buf_;              // reused for edge keys
  ProcessTopology* last_ = nullptr;  // map nodes are stable
  // Hash index over procs_: interleaved ranks switch process on every line.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, ProcessTopology*, KeyHash, std::equal_to<>> by_key_;
};

// busId integer as NCCL prints it (hex, "1b000") -> "0000:1b:00.0".
std::string busid_to_bdf(const std::string& hex);

}  // namespace ccdiag::logs
