// Grouping identical findings across ranks and hosts (report/finding_groups).
#include <catch2/catch.hpp>

#include "report/finding_groups.hpp"

using namespace ccdiag;

namespace {
Finding watchdog(int rank, const std::string& host, const std::string& seq = "4242") {
  Finding f;
  f.id = "torch.watchdog_timeout";
  f.severity = Severity::error;
  f.role = FindingRole::cascade;
  f.subject.rank = rank;
  f.subject.host = host;
  f.summary = "rank " + std::to_string(rank) + ": watchdog timeout: ALLREDUCE SeqNum=" + seq;
  return f;
}
}  // namespace

TEST_CASE("rank lists compress to ranges and strided runs", "[report][groups]") {
  CHECK(compress_ranks({}) == "");
  CHECK(compress_ranks({5}) == "5");
  CHECK(compress_ranks({3, 1, 2, 2}) == "1-3");
  CHECK(compress_ranks({0, 1, 2, 4, 5, 9}) == "0-2,4-5,9");
  CHECK(compress_ranks({0, 8, 16, 24, 32, 40, 48, 56}) == "0,8,16..56");
  CHECK(compress_ranks({0, 8, 16}) == "0,8,16");  // too short to be worth the dots
  std::vector<int> all;
  for (int r = 0; r < 1024; ++r)
    if (r != 517) all.push_back(r);
  CHECK(compress_ranks(all) == "0-516,518-1023");
}

TEST_CASE("host lists fold like ClusterShell, zero padding kept", "[report][groups]") {
  CHECK(compress_hosts({"node002", "node001", "node003", "node010"}) == "node[001-003,010]");
  CHECK(compress_hosts({"gpu7"}) == "gpu7");
  CHECK(compress_hosts({"login", "n1", "n2", "n1"}) == "login,n[1-2]");
  // Different widths are different names: n9 and n10 are not n[9-10] of one width.
  CHECK(compress_hosts({"n09", "n10", "n100"}) == "n100,n[09-10]");
}

TEST_CASE("identical findings of many ranks are one group; other facts are not merged", "[report][groups]") {
  std::vector<Finding> fs;
  Finding first;
  first.id = "nccl.ib.completion_error.retry_exceeded";
  first.severity = Severity::error;
  first.summary = "IB completion error status 12";
  first.subject.rank = 517;
  first.subject.host = "node065";
  fs.push_back(first);
  for (int r = 0; r < 16; ++r)
    if (r != 5) fs.push_back(watchdog(r, "node" + std::string(r < 8 ? "001" : "002")));
  fs.push_back(watchdog(5, "node001", "4243"));  // another collective: its own group
  const auto groups = group_findings(fs);
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].members == std::vector<size_t>{0});
  CHECK(groups[1].members.size() == 15);
  CHECK(groups[1].first == 1);
  CHECK(describe_group(groups[1]) == "ranks 0-4,6-15 (15) on node[001-002]");
  CHECK(describe_group(groups[2]) == "rank 5 on node001");
  CHECK(describe_group(groups[0]) == "rank 517 on node065");
}
