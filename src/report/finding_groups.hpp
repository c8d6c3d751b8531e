// Identical findings across ranks and hosts, grouped: at 1,000 ranks the same
// watchdog line is logged a thousand times, and the report must still fit a
// screen with the culprit on top. A group is one line with the compressed
// rank list ("ranks 0-516,518-1023 (1023)") and host list in pdsh/Slurm
// syntax ("node[001-128]"). Pure: the report keeps every finding; text and
// markdown show groups, JSON carries both.
#pragma once

#include <string>
#include <vector>

#include "ccdiag/finding.hpp"

namespace ccdiag {

struct FindingGroup {
  size_t first = 0;               // index of the first member in the findings
  std::vector<size_t> members;    // indices, in findings order
  std::vector<int> ranks;         // sorted, unique
  std::vector<std::string> hosts; // sorted, unique
};

// Groups findings with the same id, severity, role and summary once the
// member's own rank / host / pid / tid / gpu are taken out of the summary.
// Groups are in the order of their first member.
std::vector<FindingGroup> group_findings(const std::vector<Finding>& findings);

// "0-516,518-1023"; arithmetic runs of 4+ with a step above 1 as
// "0,8,16..56"; an empty list gives "".
std::string compress_ranks(std::vector<int> ranks);

// "node[001-128],gpu7,login[1-2]": names sharing a prefix and ending in
// numbers of one width are bracketed (ClusterShell's folding).
std::string compress_hosts(std::vector<std::string> hosts);

// "ranks 0-7 (8) on node[01-02]" / "rank 5 on node07" / "" for one member
// without rank and host.
std::string describe_group(const FindingGroup& g);

}  // namespace ccdiag
