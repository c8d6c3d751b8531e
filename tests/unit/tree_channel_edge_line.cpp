// The hand reader of NCCL's channel lines answers only where it gives what the
// log facts' regex gives: every line here is read both ways, and where the
// reader answers, the fields must be the regex's.
#include <catch2/catch.hpp>

#include <re2/re2.h>

#include <string>
#include <vector>

#include "analysis/tree/channel_edge_line.hpp"

using namespace ccdiag;

namespace {

// The pattern of log_facts.cpp's channel_edge(): the definition of the fact.
const RE2& edge_regex() {
  static const RE2 re(
      R"((?:Ring|Channel|Tree) \d+\S* ?: (\d+)\[(\d+)\] -> (\d+)\[(\d+)\](?:\s*\[(\w+)\])? via (\S+(?: [A-Za-z]\S*)*))");
  return re;
}

struct Read {
  bool ok = false;
  std::string from_rank, from_dev, to_rank, to_dev, dir, transport;
};

Read by_regex(const std::string& line) {
  Read r;
  r.ok = RE2::PartialMatch(line, edge_regex(), &r.from_rank, &r.from_dev, &r.to_rank, &r.to_dev, &r.dir,
                           &r.transport);
  return r;
}

}  // namespace

TEST_CASE("channel edge lines: the hand reader agrees with the regex wherever it answers",
          "[tree][channel-edge]") {
  const std::vector<std::string> lines = {
      // NCCL 2.18-2.27 (send/receive tags, NET, P2P, SHM), torchrun and kubectl prefixes.
      "gpu-node-00:30000:30105 [0] NCCL INFO Channel 00/32 : 0[0] -> 1[1] via P2P/IPC/read",
      "[rank3]:node-1:4242:4300 [3] NCCL INFO Channel 03/0 : 2[2] -> 10[2] [send] via NET/IB/1/GDRDMA",
      "<host>:1050:1315 [0] NCCL INFO Channel 15/0 : 0[90000] -> 1[1000] [send] via NET/Socket/7",
      "node:1:2 [1] NCCL INFO Channel 01/0 : 1[1] -> 0[0] [receive] via NET/IB/0/GDRDMA/Shared",
      "node:1:2 [1] NCCL INFO Channel 01 : 1[1] -> 0[0] via SHM/direct/direct",
      "2026-01-01T00:00:00Z pod/x NCCL INFO Channel 07/24 : 5[5] -> 6[6] via P2P/CUMEM",
      // Forms the reader leaves to the regex (several words, a tag without a blank, busIds in hex,
      // a Ray suffix, a Ring/Tree line, trailing blanks, colon without a blank).
      "node:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/AWS Libfabric/0/GDRDMA/Shared",
      "node:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0][send] via NET/IB/0",
      "node:1:2 [0] NCCL INFO Channel 00/0 : 0[1a000] -> 1[1b000] via P2P/IPC",
      "(RayWorker pid=1) node:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC [repeated 2x across "
      "cluster]",
      "node:1:2 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] via P2P/IPC",
      "node:1:2 [0] NCCL INFO Trees Channel 00 : 0[0] -> 1[1] via P2P/IPC",
      "node:1:2 [0] NCCL INFO Channel 00/02 :    0   1   2   3",
      "node:1:2 [0] NCCL INFO Channel 00/32 : 0[0] -> 1[1] via P2P/IPC ",
      "node:1:2 [0] NCCL INFO Channel 00/32: 0[0] -> 1[1] via P2P/IPC",
      "node:1:2 [0] NCCL INFO Channel 00/32 : 0[0] -> 1[1] via ",
      "node:1:2 [0] NCCL INFO Channel 00/32 : 12345678901[0] -> 1[1] via P2P/IPC",
      "node:1:2 [0] NCCL INFO Connected all rings",
  };
  int answered = 0;
  for (const auto& line : lines) {
    INFO(line);
    const Read want = by_regex(line);
    const auto got = read_channel_edge_line(line);
    if (!got) continue;
    ++answered;
    REQUIRE(want.ok);
    CHECK(std::to_string(got->from_rank) == want.from_rank);
    CHECK(std::to_string(got->from_dev) == want.from_dev);
    CHECK(std::to_string(got->to_rank) == want.to_rank);
    CHECK(std::to_string(got->to_dev) == want.to_dev);
    CHECK(std::string(got->direction) == want.dir);
    CHECK(std::string(got->transport) == want.transport);
  }
  // The six common forms above are the reader's; the rest are the regex's.
  CHECK(answered == 6);
  CHECK(!read_channel_edge_line(lines[6]));  // a plugin name with a blank
  CHECK(!read_channel_edge_line(lines[9]));  // a Ray suffix
}
