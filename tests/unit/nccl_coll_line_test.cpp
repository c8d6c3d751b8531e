// The one parser of NCCL_DEBUG_SUBSYS=COLL lines (perf timing and the decision
// tree's log facts both read through it). Lines are as NCCL's enqueue.cc prints them.
#include <catch2/catch.hpp>

#include "ccdiag/nccl_coll_line.hpp"

using ccdiag::logs::parse_nccl_coll_line;

TEST_CASE("a COLL line gives its call, communicator and counters", "[coll-line]") {
  // NCCL 2.21 (nccl-tests#117 in the real-incident corpus), prefix included.
  const auto c = parse_nccl_coll_line(
      "<host>:199574:201142 [1] NCCL INFO Recv: opCount da0 sendbuff (nil) recvbuff 0x7f526c000000 count 2420736 "
      "datatype 7 op 0 root 0 comm 0x7f516c002e10 [nranks=2] stream 0x55f1de7279a0");
  REQUIRE(c);
  CHECK(c->func == "Recv");
  CHECK(c->op_count == 0xda0);
  CHECK(c->count == 2420736);
  CHECK(c->datatype == 7);
  CHECK(c->root == 0);
  CHECK(c->comm == "0x7f516c002e10");
  CHECK(c->nranks == 2);

  // NCCL 2.28 adds "task <n> globalrank <n>" after the stream: ignored.
  const auto d = parse_nccl_coll_line(
      "AllReduce_Sum_f32: opCount 1f sendbuff 0x1 recvbuff 0x2 count 64 datatype 7 op 0 root 0 comm 0x55d0 "
      "[nranks=16] stream 0x2 task 0 globalrank 3");
  REQUIRE(d);
  CHECK(d->func == "AllReduce_Sum_f32");
  CHECK(d->op_count == 0x1f);
  CHECK(d->nranks == 16);
}

TEST_CASE("a COLL line without [nranks=] still parses; nranks is then 0", "[coll-line]") {
  const auto c = parse_nccl_coll_line(
      "Broadcast: opCount 0 sendbuff 0x1 recvbuff 0x1 count 8 datatype 0 op 0 root 2 comm 0xabc stream 0x2");
  REQUIRE(c);
  CHECK(c->nranks == 0);
  CHECK(c->root == 2);
}

TEST_CASE("malformed COLL lines are refused, not half-read", "[coll-line]") {
  for (const char* bad : {
           "AllReduce: opCount zz sendbuff 0x1 recvbuff 0x1 count 8 datatype 7 op 0 root 0 comm 0x1 [nranks=2]",
           ": opCount 1 sendbuff 0x1 recvbuff 0x1 count 8 datatype 7 op 0 root 0 comm 0x1 [nranks=2]",
           "AllReduce: opCount 1 recvbuff 0x1 count 8 datatype 7 op 0 root 0 comm 0x1 [nranks=2]",
           "AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count 8 datatype 7 op 0 root 0 comm nil [nranks=2]",
           "AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count 99999999999999999999 datatype 7 op 0 root 0 comm 0x1",
           "AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count 8 datatype 7 op 0 root 0 comm 0x1 [nranks=-4]",
           "AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count 8",
           "NCCL INFO Channel 00/02 :    0   1",
       })
    CHECK_FALSE(parse_nccl_coll_line(bad));
}
