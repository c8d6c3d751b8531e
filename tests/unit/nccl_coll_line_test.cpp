// The one parser of NCCL_DEBUG_SUBSYS=COLL lines (perf timing and the decision
// tree's log facts both read through it). Lines are as NCCL's enqueue.cc prints them.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

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

namespace {

// The tokenizing parser as it was before it was tuned (stop 39): the tuned one
// must accept and read exactly what this one does.
bool ref_number(std::string_view v, int base, int64_t& out) {
  if (v.empty() || v.size() > 18) return false;
  size_t k = 0;
  const bool neg = v[0] == '-';
  if (neg && ++k == v.size()) return false;
  int64_t n = 0;
  for (; k < v.size(); ++k) {
    const char ch = v[k];
    const int d = ch >= '0' && ch <= '9'                 ? ch - '0'
                  : base == 16 && ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                  : base == 16 && ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                                         : -1;
    if (d < 0) return false;
    n = n * base + d;
  }
  out = neg ? -n : n;
  return true;
}

std::optional<ccdiag::logs::NcclCollLine> ref_parse(std::string_view t) {
  const size_t at = t.find(": opCount ");
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  ccdiag::logs::NcclCollLine c;
  size_t b = at;
  auto name_char = [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
  };
  while (b > 0 && name_char(t[b - 1])) --b;
  if (b == at) return std::nullopt;
  c.func = t.substr(b, at - b);
  size_t i = at + 10;
  auto token = [&]() {
    while (i < t.size() && t[i] == ' ') ++i;
    const size_t s = i;
    while (i < t.size() && t[i] != ' ') ++i;
    return t.substr(s, i - s);
  };
  if (!ref_number(token(), 16, c.op_count)) return std::nullopt;
  if (token() != "sendbuff") return std::nullopt;
  token();
  if (token() != "recvbuff") return std::nullopt;
  token();
  if (token() != "count" || !ref_number(token(), 10, c.count)) return std::nullopt;
  if (token() != "datatype" || !ref_number(token(), 10, c.datatype)) return std::nullopt;
  if (token() != "op" || !ref_number(token(), 10, c.redop)) return std::nullopt;
  if (token() != "root" || !ref_number(token(), 10, c.root)) return std::nullopt;
  if (token() != "comm") return std::nullopt;
  c.comm = token();
  if (c.comm.size() < 3 || c.comm.substr(0, 2) != "0x") return std::nullopt;
  const auto nr = token();
  if (nr.size() >= 10 && nr.substr(0, 8) == "[nranks=" && nr.back() == ']') {
    if (!ref_number(nr.substr(8, nr.size() - 9), 10, c.nranks) || c.nranks <= 0) return std::nullopt;
  }
  return c;
}

}  // namespace

TEST_CASE("the tuned COLL parser reads every mutated line as the plain tokenizer did", "[coll-line]") {
  const std::vector<std::string> seeds = {
      "[rank0]:gpu-node-00:30000:30000 [0] NCCL INFO AllReduce: opCount 1a sendbuff 0x7f2a21000000 recvbuff "
      "0x7f2a2f360000 count 25690112 datatype 7 op 0 root 0 comm 0x55d000000000 [nranks=64] stream 0x55d10000",
      "h:1:2 [1] NCCL INFO Recv: opCount DA0 sendbuff (nil) recvbuff 0x7f52 count 2420736 datatype 7 op 0 root 0 "
      "comm 0x7f516c002e10 [nranks=2] stream 0x55f1",
      "AllReduce_Sum_f32: opCount -1f sendbuff 0x1 recvbuff 0x2 count 64 datatype 7 op 0 root 0 comm 0x55d0 "
      "[nranks=16] stream 0x2 task 0 globalrank 3",
  };
  const std::string alphabet = " :0123456789abcdefABCDEFx-[]=nrkst\t";
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  auto next = [&rng]() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  size_t accepted = 0;
  for (int round = 0; round < 30000; ++round) {
    std::string s = seeds[next() % seeds.size()];
    const int edits = 1 + static_cast<int>(next() % 3);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t at = next() % s.size();
      switch (next() % 4) {
        case 0: s[at] = alphabet[next() % alphabet.size()]; break;
        case 1: s.insert(at, 1, alphabet[next() % alphabet.size()]); break;
        case 2: s.erase(at, 1 + next() % 4); break;
        default: s.resize(at); break;
      }
    }
    const auto a = ref_parse(s), b = parse_nccl_coll_line(s);
    REQUIRE(a.has_value() == b.has_value());
    if (!a) continue;
    ++accepted;
    CHECK(a->func == b->func);
    CHECK(a->comm == b->comm);
    CHECK(a->op_count == b->op_count);
    CHECK(a->count == b->count);
    CHECK(a->datatype == b->datatype);
    CHECK(a->redop == b->redop);
    CHECK(a->root == b->root);
    CHECK(a->nranks == b->nranks);
  }
  CHECK(accepted > 1000);  // the mutations leave many lines well-formed: both paths are compared
}
