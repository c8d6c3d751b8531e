// Flight-recorder reader and cross-rank analysis, from byte buffers laid out
// with the plugin's own header (the plugin itself is driven end to end by the
// harness in tests/cli/test_nccl.py).
#include <cstring>
#include <memory>

#include <catch2/catch.hpp>

#include "../../tools/nccl-profiler-plugin/ccdiag_fr_layout.h"
#include "analysis/tree/catalogue.hpp"
#include "collectors/nccl/flight_analysis.hpp"
#include "collectors/nccl/flight_recorder.hpp"
#include "collectors/nccl/nccl_artifacts.hpp"

using namespace ccdiag;
using namespace ccdiag::nccl;

namespace {

constexpr uint64_t kSec = 1000000000ull;
constexpr uint64_t kT0 = 1780000000ull * kSec;  // 2026

struct Rank {
  std::unique_ptr<ccdiag_fr_file> f = std::make_unique<ccdiag_fr_file>();
  explicit Rank(int rank, int nranks = 4) {
    std::memset(f.get(), 0, sizeof(*f));
    auto& h = f->header;
    h.magic = CCDIAG_FR_MAGIC;
    h.layout_version = CCDIAG_FR_LAYOUT_VERSION;
    h.file_size = sizeof(ccdiag_fr_file);
    h.ring_size = CCDIAG_FR_RING_SIZE;
    h.max_channels = CCDIAG_FR_MAX_CHANNELS;
    h.comm_hash = 0x5c1e0c4a9d2f7b31ull;
    h.rank = rank;
    h.nranks = nranks;
    h.pid = 1000 + rank;
    std::strcpy(h.host, "node1");
    h.created_ns = kT0;
    h.proxy_heartbeat_ns = kT0;
  }
  // Appends an AllReduce op; returns its ring slot.
  int op(uint64_t seq, int state, uint64_t enq) {
    uint64_t ticket = f->header.ring_head++;
    int slot = static_cast<int>(ticket % CCDIAG_FR_RING_SIZE);
    auto& o = f->ops[slot];
    o.gen = ticket + 1;
    o.seq = seq;
    o.kind = CCDIAG_FR_OP_COLL;
    o.func_index = CCDIAG_FR_FUNC_ALLREDUCE;
    std::strcpy(o.func, "AllReduce");
    std::strcpy(o.algo, "RING");
    std::strcpy(o.proto, "SIMPLE");
    o.state = state;
    o.start_ns = o.enqueued_ns = enq;
    if (state == CCDIAG_FR_OP_DONE) {
      o.proxy_total = 2;
      o.done_ns = enq + 1000;
    }
    f->header.last_seq[CCDIAG_FR_FUNC_ALLREDUCE] = seq + 1;
    return slot;
  }
  void chan(int slot, int channel, bool send, int peer, int state, uint64_t t) {
    auto& c = f->chans[channel * 2 + (send ? 1 : 0)];
    c.gen = 1;
    c.op_gen = f->ops[slot].gen;
    c.op_seq = f->ops[slot].seq;
    c.op_slot = slot;
    c.channel = channel;
    c.is_send = send;
    c.peer = peer;
    c.n_steps = 4;
    c.last_step = 3;
    c.step_state = state;
    c.step_ns = t;
    c.op_start_ns = t;
    f->ops[slot].proxy_total++;
    f->ops[slot].proxy_active++;
    f->ops[slot].state = CCDIAG_FR_OP_PROXY;
  }
  FrSnapshot snap() const {
    auto s = parse_flight_file(std::string_view(reinterpret_cast<const char*>(f.get()), sizeof(*f)), "mem");
    REQUIRE(s.ok());
    return *s;
  }
};

std::vector<FrSnapshot> healthy_upto(std::vector<Rank>& ranks, uint64_t n) {
  std::vector<FrSnapshot> v;
  for (auto& r : ranks)
    for (uint64_t s = 0; s < n; ++s) r.op(s, CCDIAG_FR_OP_DONE, kT0 + s * kSec / 100);
  return v;
}

}  // namespace

TEST_CASE("flight file: refuses foreign, short and newer files", "[nccl][fr]") {
  CHECK_FALSE(parse_flight_file("", "x").ok());
  CHECK_FALSE(parse_flight_file(std::string(sizeof(ccdiag_fr_file), '\0'), "x").ok());
  Rank r(0);
  std::string bytes(reinterpret_cast<const char*>(r.f.get()), sizeof(ccdiag_fr_file));
  CHECK(parse_flight_file(bytes, "x").ok());
  CHECK_FALSE(parse_flight_file(bytes.substr(0, bytes.size() - 1), "x").ok());
  r.f->header.layout_version = 99;
  std::string newer(reinterpret_cast<const char*>(r.f.get()), sizeof(ccdiag_fr_file));
  auto e = parse_flight_file(newer, "x");
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().message.find("layout version 99") != std::string::npos);
}

TEST_CASE("flight file: ops come back oldest first; torn channels are flagged", "[nccl][fr]") {
  Rank r(1);
  for (uint64_t s = 0; s < CCDIAG_FR_RING_SIZE + 5; ++s) r.op(s, CCDIAG_FR_OP_DONE, kT0 + s);
  int slot = r.op(133, CCDIAG_FR_OP_ENQUEUED, kT0 + 500);
  r.chan(slot, 0, true, 2, 9, kT0 + 600);
  r.f->chans[1].lock = 3;  // mid-write
  auto s = r.snap();
  REQUIRE(s.ops.size() == CCDIAG_FR_RING_SIZE);
  CHECK(s.ops.front().seq == 6);
  CHECK(s.ops.back().seq == 133);
  REQUIRE(s.channels.size() == 1);
  CHECK(s.channels[0].torn);
  CHECK(s.channels[0].op_seq == 133u);
  CHECK(step_state_name(s.channels[0].step_state) == "SendWait");
  CHECK(s.host == "node1");
}

TEST_CASE("flight analysis: one rank never enqueues", "[nccl][fr]") {
  std::vector<Rank> ranks;
  for (int i = 0; i < 4; ++i) ranks.emplace_back(i);
  healthy_upto(ranks, 10);
  const uint64_t t = kT0 + 10 * kSec;
  for (int i : {0, 1, 3}) {
    int slot = ranks[static_cast<size_t>(i)].op(10, CCDIAG_FR_OP_ENQUEUED, t);
    if (i == 1) ranks[1].chan(slot, 0, true, 2, 20, t);
    if (i == 3) ranks[3].chan(slot, 0, false, 2, 10, t);
    if (i == 0) ranks[0].f->ops[slot].kernel_started = 1;
  }
  std::vector<FrSnapshot> snaps;
  for (auto& r : ranks) snaps.push_back(r.snap());
  auto a = analyze_flight(snaps, t + 30 * kSec, 3.0);
  REQUIRE(a.size() == 1);
  CHECK(a[0].verdict == "not_enqueued");
  CHECK(a[0].layer == "framework");
  CHECK(a[0].culprits == std::vector<int>{2});
  CHECK(a[0].in_flight == "AllReduce seq 10");
  CHECK(a[0].ranks[1].where == "waiting_on_peer");
  CHECK(a[0].ranks[1].waits_on == 2);
  CHECK(a[0].ranks[3].waits.at(0).age_s == Approx(30.0));
  auto fs = flight_findings(a, "mem");
  int primaries = 0;
  for (const auto& f : fs) {
    if (f.role != FindingRole::primary) continue;
    ++primaries;
    CHECK(f.id == "nccl.fr.not_enqueued");
    CHECK(f.subject.rank == 2);
    for (const auto& s : f.supports) CHECK(find_cause(s.cause) != nullptr);
  }
  CHECK(primaries == 1);
}

TEST_CASE("flight analysis: young states are in progress, not stuck", "[nccl][fr]") {
  std::vector<Rank> ranks;
  for (int i = 0; i < 2; ++i) ranks.emplace_back(i, 2);
  const uint64_t t = kT0;
  int s0 = ranks[0].op(0, CCDIAG_FR_OP_ENQUEUED, t);
  ranks[0].chan(s0, 0, true, 1, 9, t);
  int s1 = ranks[1].op(0, CCDIAG_FR_OP_ENQUEUED, t);
  ranks[1].chan(s1, 0, false, 0, 10, t);
  std::vector<FrSnapshot> snaps{ranks[0].snap(), ranks[1].snap()};
  CHECK(analyze_flight(snaps, t + kSec, 3.0)[0].verdict == "healthy");
  auto stuck = analyze_flight(snaps, t + 60 * kSec, 3.0)[0];
  CHECK(stuck.verdict == "network_wait");
  CHECK(stuck.layer == "transport");
  CHECK(stuck.culprits == std::vector<int>{0});
}

TEST_CASE("flight analysis: no proxy heartbeat since enqueue, and GPU waits", "[nccl][fr]") {
  std::vector<Rank> ranks;
  for (int i = 0; i < 2; ++i) ranks.emplace_back(i, 2);
  const uint64_t t = kT0 + kSec;
  ranks[0].op(0, CCDIAG_FR_OP_ENQUEUED, t);  // heartbeat kT0 < t, nothing after
  int s1 = ranks[1].op(0, CCDIAG_FR_OP_ENQUEUED, t);
  ranks[1].chan(s1, 0, false, 0, 10, t);
  ranks[1].f->header.proxy_heartbeat_ns = t;
  auto a = analyze_flight({ranks[0].snap(), ranks[1].snap()}, t + 20 * kSec, 3.0)[0];
  CHECK(a.verdict == "proxy_stalled");
  CHECK(a.culprits == std::vector<int>{0});
  // Same, but the proxy thread is alive: the kernel never started.
  ranks[0].f->header.proxy_heartbeat_ns = t + 5 * kSec;
  a = analyze_flight({ranks[0].snap(), ranks[1].snap()}, t + 20 * kSec, 3.0)[0];
  CHECK(a.verdict == "kernel_not_started");
  CHECK(a.layer == "nccl");
  // A rank whose send waits for its own GPU.
  std::vector<Rank> g;
  for (int i = 0; i < 2; ++i) g.emplace_back(i, 2);
  int a0 = g[0].op(0, CCDIAG_FR_OP_ENQUEUED, t);
  g[0].chan(a0, 0, true, 1, 8, t);
  int a1 = g[1].op(0, CCDIAG_FR_OP_ENQUEUED, t);
  g[1].chan(a1, 0, false, 0, 10, t);
  auto b = analyze_flight({g[0].snap(), g[1].snap()}, t + 20 * kSec, 3.0)[0];
  CHECK(b.verdict == "gpu_wait");
  CHECK(b.layer == "hardware");
  CHECK(b.culprits == std::vector<int>{0});
  // Backpressure: rank 1's send was posted and the network never completed it;
  // rank 0's GPU waits as a consequence. The network send is the cause.
  std::vector<Rank> n;
  for (int i = 0; i < 2; ++i) n.emplace_back(i, 2);
  int n0 = n[0].op(0, CCDIAG_FR_OP_ENQUEUED, t);
  n[0].chan(n0, 0, false, 1, 12, t);  // RecvGPUWait
  int n1 = n[1].op(0, CCDIAG_FR_OP_ENQUEUED, t);
  n[1].chan(n1, 0, true, 0, 9, t);    // SendWait
  auto c = analyze_flight({n[0].snap(), n[1].snap()}, t + 20 * kSec, 3.0)[0];
  CHECK(c.verdict == "network_wait");
  CHECK(c.layer == "transport");
  CHECK(c.culprits == std::vector<int>{1});
}

TEST_CASE("flight analysis: a waited-on rank without a file is named", "[nccl][fr]") {
  std::vector<Rank> ranks;
  for (int i = 0; i < 2; ++i) ranks.emplace_back(i, 3);
  const uint64_t t = kT0;
  for (int i = 0; i < 2; ++i) {
    int s = ranks[static_cast<size_t>(i)].op(0, CCDIAG_FR_OP_ENQUEUED, t);
    ranks[static_cast<size_t>(i)].chan(s, 0, false, 2, 10, t);
  }
  auto a = analyze_flight({ranks[0].snap(), ranks[1].snap()}, t + 60 * kSec, 3.0)[0];
  CHECK(a.verdict == "peer_missing");
  CHECK(a.culprits == std::vector<int>{2});
  CHECK(a.ranks[2].where == "no_file");
}

TEST_CASE("base64 and ISO time helpers", "[nccl][fr]") {
  for (std::string s : {std::string(), std::string("a"), std::string("ab"), std::string("abc"),
                        std::string("\x00\xff\x10\x80", 4)}) {
    std::string back;
    CHECK(base64_decode(base64_encode(s), back));
    CHECK(back == s);
  }
  CHECK(base64_encode("abc") == "YWJj");
  CHECK(iso_utc_to_ns("2026-04-22T21:34:20Z") == 1776893660ull * kSec);
  CHECK(iso_utc_to_ns("yesterday") == 0);
}
