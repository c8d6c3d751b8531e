// Host lists in the grammar pdsh, ClusterShell and Slurm share
// (reference: perf-and-fleet.md §6.1): comma-separated terms, each a name
// with bracket groups of numbers and ranges ("node[001-128]", "foo[7,9-10]",
// "rack[1-2]-n[01-02]" as a cartesian product, a suffix after the bracket),
// and pdsh-style exclusion terms ("-w foo[0-5],-foo[1-3]"). Zero padding is
// kept: the width of a range is the width of its lower bound when that has a
// leading zero (ClusterShell's rule), so "n[08-10]" gives n08 n09 n10.
//
// Pure and total: a malformed list is an Error naming the term, never a
// crash; expansion is capped (kMaxHosts) so "n[0-999999999]" is refused
// instead of exhausting memory.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/result.hpp"

namespace ccdiag {

// 65,536 hosts is several times the largest training cluster (12,500 hosts
// of 8 GPUs for 100,000 GPUs); past it a list is a typo or an attack, and
// expanding it would cost seconds.
inline constexpr size_t kMaxHosts = 65536;

// Expands a host list into names, in order of appearance, without duplicates.
Result<std::vector<std::string>> expand_hostlist(std::string_view list);

// Reads one host list per line (blank lines and '#' comments skipped), as
// pdsh's `-w ^file` and clush's --hostfile do.
Result<std::vector<std::string>> expand_hostlist_lines(std::string_view text);

// Whether a name is safe to use as a directory name and on a command line:
// [A-Za-z0-9._-], not starting with '-' or '.', at most 253 characters.
bool is_safe_host_name(std::string_view name);

}  // namespace ccdiag
