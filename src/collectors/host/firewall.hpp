// Whether the host's firewall lets a peer open a TCP connection to an
// ephemeral port, which NCCL's bootstrap and socket transport (and Gloo) need:
// they listen on random ports from net.ipv4.ip_local_port_range.
//
//   firewall  host.firewall {input_policy, allows_ephemeral, why, ephemeral_range, source}
//
// Read-only: `nft -j list ruleset` (or `iptables-save`) live, or the same
// output captured in a fixture tree as <root>/nft-ruleset.json /
// <root>/iptables-save.txt. The input hook's chains are walked for a new TCP
// connection from a remote peer on a non-loopback interface to the whole
// ephemeral range. A rule the walk cannot judge (a jump into another chain, an
// unknown match) leaves allows_ephemeral out: unknown, never "open".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "collectors/collector.hpp"

namespace ccdiag {

CollectorOutput collect_firewall(const CollectContext& ctx);

struct FirewallJudgement {
  std::string input_policy;        // "accept", "drop" (lower case); "" when no input chain
  std::optional<bool> allows;      // nullopt: could not tell
  std::string why;                 // the rule or policy that decided, or why unknown
};

// Exposed for unit tests. `lo`..`hi`: the ephemeral port range.
FirewallJudgement judge_nft_json(std::string_view json_text, int lo, int hi);
FirewallJudgement judge_iptables_save(std::string_view text, int lo, int hi);

}  // namespace ccdiag
