// NCCL INFO COLL lines with timestamps as per-rank arrivals (docs/perf.md "NCCL INFO logs").
// Line formats: NCCL src/enqueue.cc (COLL), src/init.cc (Init COMPLETE), src/debug.cc (prefix, timestamp).
#include <cstdio>

#include <catch2/catch.hpp>

#include "collectors/perf/nccl_coll_log.hpp"

using namespace ccdiag::perf;

namespace {

const char* kInit =
    "[2026-11-30 10:00:00.000100] gpu017:48213:48290 [3] NCCL INFO comm 0x55d0c8a0e2b0 rank 3 nranks 16 cudaDev 3 nvmlDev 3 busId 5d000 "
    "commId 0x5c1e0c4a9d2f7b31 - Init COMPLETE\n";

std::string fmt_hex(int v) {
  char b[16];
  std::snprintf(b, sizeof b, "%x", v);
  return b;
}

std::string coll(const std::string& ts, const std::string& func, int op, long count, const std::string& comm = "0x55d0c8a0e2b0") {
  return ts + "gpu017:48213:48213 [3] NCCL INFO " + func + ": opCount " + fmt_hex(op) + " sendbuff 0x7f3a5c000000 recvbuff 0x7f3a5c000000 count " +
         std::to_string(count) + " datatype 7 op 0 root 0 comm " + comm + " [nranks=16] stream 0x55d0c9b1a6f0\n";
}

}  // namespace

TEST_CASE("COLL lines: communicator from the init line, n-th op of an opCount, NCCL's microsecond timestamps", "[perf-log]") {
  std::string text = std::string(kInit) + coll("[2026-11-30 10:00:05.000250] ", "AllReduce", 0x1a, 6553600) +
                     coll("[2026-11-30 10:00:05.000450] ", "AllReduce", 0x1a, 2621440) +  // same group: same opCount
                     coll("[2026-11-30 10:00:05.000650] ", "Send", 0x1b, 1024) +          // p2p: not a collective
                     coll("[2026-11-30 10:00:05.000850] ", "AllGather", 0x1b, 131072) +
                     coll("[2026-11-30 10:00:05.001050] ", "AllReduce", 0x1c, 64, "0x55d0c8ffffff");  // no init line: not matchable
  CollLog log;
  read_coll_log(text, "rank3.log", log);
  REQUIRE(log.timings.colls.size() == 3);
  const auto& a = log.timings.colls[0];
  CHECK(a.comm == "0x5c1e0c4a9d2f7b31");
  CHECK(a.comm_rank == 3);
  CHECK(a.nranks == 16);
  CHECK(a.func == "AllReduce");
  CHECK(a.count == 6553600);
  CHECK(a.proc.host == "gpu017");
  CHECK(a.proc.pid == 48213);
  CHECK(a.proc.busid == "0000:5d:00.0");
  CHECK(a.seq == (0x1aull << 16));
  CHECK(log.timings.colls[1].seq == (0x1aull << 16 | 1));
  CHECK(log.timings.colls[2].func == "AllGather");
  REQUIRE(a.arrive_ns);
  REQUIRE(log.timings.colls[1].arrive_ns);
  CHECK(*log.timings.colls[1].arrive_ns - *a.arrive_ns == Approx(200000).margin(1000));
  CHECK(log.files.back().coll_lines == 3);  // the line of a communicator never initialised does not count
  CHECK(log.files.back().timed == 3);
  CHECK(log.resolution_ms == Approx(0.001));
}

TEST_CASE("COLL lines: kubectl timestamps, whole-second timestamps, none, and an older init line without commId", "[perf-log]") {
  const std::string init_old =
      "2026-11-30T10:00:00.000000000Z gpu017:48213:48290 [3] NCCL INFO comm 0x55d0c8a0e2b0 rank 3 nranks 16 cudaDev 3 busId 5d000 - Init COMPLETE\n";
  CollLog k;
  read_coll_log(init_old + coll("2026-11-30T10:00:05.123456789Z ", "AllReduce", 1, 64), "k.log", k);
  REQUIRE(k.timings.colls.size() == 1);
  CHECK(k.timings.colls[0].comm == "nranks16#0");
  CHECK(k.timings.colls[0].arrive_ns);
  CHECK(k.resolution_ms == Approx(1e-6));

  CollLog s;
  read_coll_log(std::string(kInit) + coll("[2026-11-30 10:00:05] ", "AllReduce", 1, 64), "s.log", s);
  CHECK(s.resolution_ms == Approx(1000));

  CollLog none;
  read_coll_log(std::string(kInit).substr(std::string(kInit).find(']') + 2) + coll("", "AllReduce", 1, 64), "n.log", none);
  REQUIRE(none.timings.colls.size() == 1);
  CHECK_FALSE(none.timings.colls[0].arrive_ns);
  CHECK(none.files.back().timed == 0);
  CHECK(none.resolution_ms == 0);
}

TEST_CASE("COLL log reader is total: garbage and truncated lines are skipped", "[perf-log]") {
  CollLog log;
  read_coll_log(std::string(kInit) + "gpu017:48213:48213 [3] NCCL INFO AllReduce: opCount zz count\n" +
                    "gpu017:48213:48213 [3] NCCL INFO AllReduce: opCount\n\x1b[31m\r\n" + std::string(5000, 'x') + "\n",
                "bad.log", log);
  CHECK(log.timings.colls.empty());
  CHECK(log.files.back().coll_lines == 0);
}
