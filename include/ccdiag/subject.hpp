// Subject: what a piece of evidence, a finding or a verdict is about.
// Every field is optional; only what is known is set. The same struct names the
// culprit of a verdict (docs/json.md: host, rank, pid, gpu, nic, port,
// process_group, seq).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace ccdiag {

struct Subject {
  std::optional<std::string> host;
  std::optional<int> rank;
  std::optional<int64_t> pid;
  std::optional<int64_t> tid;
  std::optional<std::string> gpu;   // index, PCI BDF ("0000:1b:00.0") or UUID, as known
  std::optional<std::string> nic;   // RDMA device ("mlx5_3") or netdev ("eth1")
  std::optional<int> port;          // NIC port number
  std::optional<std::string> comm;  // NCCL commHash, "0x" + 16 hex digits
  std::optional<std::string> process_group;
  std::optional<int64_t> seq;       // collective sequence number

  bool empty() const;
  // Fields of `other` that are set override ours.
  void merge(const Subject& other);
  // "host node7 rank 5 gpu 0000:1b:00.0" — the set fields, in a fixed order.
  std::string describe() const;
};

void to_json(nlohmann::json& j, const Subject& s);
void from_json(const nlohmann::json& j, Subject& s);

}  // namespace ccdiag
