// The log engine's hot path: how prefilter expressions are cut (always a
// superset of the pattern), one Hyperscan hit per line and signature however
// many match ends the pattern has, captures typed as the JSON will be, and
// line numbers counted across blocks and odd line lengths.
#include <catch2/catch.hpp>

#include <string>

#include <re2/re2.h>

#include "collectors/logs/analyzer.hpp"
#include "collectors/logs/captures.hpp"
#include "collectors/logs/matcher.hpp"
#include "collectors/logs/signature.hpp"

using namespace ccdiag;
using namespace ccdiag::logs;

TEST_CASE("prefilter cuts open-ended tails, optional heads and keeps the rest", "[logs]") {
  // NCCL's transport line: "\S+" at the end reported one match per character.
  CHECK(prefilter_expression(R"re(-> (?P<to>\d+)\[(?P<dev>\d+)\] via (?P<transport>\S+(?: pointer)?))re") ==
        R"re(-> (?:\d+)\[(?:\d+)\] via )re");
  // torchelastic's "  rank      : 5 (local_rank: 5)": the leading \s* made every byte a start.
  // ... and "rank", which torchrun's "[rank3]:" tag puts on every line, is no entry literal either.
  CHECK(prefilter_expression(R"re(\s*rank\s*: (?P<rank>\d+) \(local_rank: (?P<lr>\d+)\))re") ==
        R"re(: (?:\d+) \(local_rank: (?:\d+)\))re");
  // NCCL's debug prefix starts every line of an NCCL_DEBUG log: the breadcrumb is entered at its file name.
  CHECK(prefilter_expression(R"re(NCCL INFO (?P<f>[\w/.-]+\.(?:cc|h)):(?P<l>\d+) -> (?P<c>\d+))re") ==
        R"re((?:[\w/.-]+\.(?:cc|h)):(?:\d+) -> )re");
  // Not where a suffix would not be a superset, the head is quantified, or too little would be left.
  CHECK(prefilter_expression(R"re(rank \d+ failed|rank \d+ lost)re") == R"re(rank \d+ failed|rank \d+ lost)re");
  CHECK(prefilter_expression(R"re(rank+ of the group)re") == R"re(rank+ of the group)re");
  CHECK(prefilter_expression(R"re(NCCL INFO nranks)re") == R"re(NCCL INFO nranks)re");
  CHECK(prefilter_expression(R"re((?:\[Rank (?P<rank>\d+)\] )?Watchdog caught collective)re") ==
        "Watchdog caught collective");
  // A group keeps its flags when only its tail is cut.
  CHECK(prefilter_expression(R"re(Port module event(?i:cable \w+))re") == "Port module event(?i:cable )");
  // Trailing anchors and zero-width assertions go; escaped ones are literals.
  CHECK(prefilter_expression(R"re(CUDA error 802\b)re") == "CUDA error 802");
  CHECK(prefilter_expression(R"re(costs 5\$ each$)re") == R"re(costs 5\$ each)re");
  // Never below 8 characters, never an empty alternative, never a broken pattern.
  CHECK(prefilter_expression(R"re(ab \d+)re") == R"re(ab \d+)re");
  CHECK(prefilter_expression(R"re(timed out waiting|(?:\d+))re") == R"re(timed out waiting|(?:\d+))re");
  CHECK(prefilter_expression(R"re(unbalanced (group \d+)re") == R"re(unbalanced (group \d+)re");
  CHECK(prefilter_expression(R"re(character class [a-z]+)re") == "character class ");
  CHECK(prefilter_expression(R"re(class \[x] and [\]]+)re") == R"re(class \[x] and )re");
}

TEST_CASE("every catalogue prefilter is a superset of its pattern on the example lines", "[logs]") {
  // RE2 on the prefilter expression must accept every line the full pattern accepts.
  RE2::Options o;
  o.set_log_errors(false);
  const std::string lines[] = {
      "node7:41205:41290 [5] transport/net_ib.cc:1696 NCCL WARN NET/IB: Got completion from peer 10.10.0.17<50411> "
      "with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.10.0.15 hca mlx5_5",
      "gpu-node-01:41205:41205 [5] NCCL INFO Channel 00/0 : 5[5] -> 6[6] via P2P/CUMEM/read",
      "gpu-node-01:41205:41205 [5] NCCL INFO Channel 00/32 :    0   1   2   3",
      "  rank      : 5 (local_rank: 5)",
      "node7:41205:41290 [5] NCCL INFO transport/net_ib.cc:1696 -> 6",
      "node7:41205:41290 [5] NCCL INFO nranks 16",
      "[rank3]:[E422 21:44:21.1 42 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600084 milliseconds "
      "before timing out.",
  };
  for (const auto& s : builtin_signatures()) {
    RE2 full(s.pattern, o), pre(prefilter_expression(s.pattern), o);
    INFO(s.id << ": " << prefilter_expression(s.pattern));
    REQUIRE(pre.ok());
    for (const auto& line : lines)
      if (RE2::PartialMatch(line, full)) CHECK(RE2::PartialMatch(line, pre));
  }
}

TEST_CASE("one hit per line and signature, with the right line bounds", "[logs]") {
  std::vector<Signature> sigs(1);
  sigs[0].id = "t.transport";
  sigs[0].pattern = R"re(via (?P<transport>\S+))re";  // ends in \S+: many match ends per line
  auto m = Matcher::compile(sigs);
  REQUIRE(m);
  const std::string block = "x via P2P/CUMEM/read\nnothing here\r\n\nvia NET/IB/0/GDRDMA";  // last line: no '\n'
  std::vector<Hit> hits;
  (*m)->scan(block, hits);
  REQUIRE(hits.size() == 2);
  CHECK(block.substr(hits[0].line_begin, hits[0].line_end - hits[0].line_begin) == "x via P2P/CUMEM/read");
  CHECK(block.substr(hits[1].line_begin, hits[1].line_end - hits[1].line_begin) == "via NET/IB/0/GDRDMA");
  CHECK(hits[1].line_end == block.size());
}

TEST_CASE("captures are typed as the JSON will be", "[logs]") {
  const CaptureName rank{"rank", false}, busid{"busid", keep_as_string("busid")}, big{"seq", false},
      neg{"code", false}, word{"transport", false};
  Captures c;
  c.add(&rank, "0042");
  c.add(&busid, "1b000");
  c.add(&big, "1234567890123456789012");  // 22 digits: too long for a number
  c.add(&neg, "-3");
  c.add(&word, "NET/IB/0");
  CHECK(keep_as_string("busid"));
  CHECK_FALSE(keep_as_string("rank"));
  CHECK(c.integer("rank") == 42);
  CHECK(c.text("rank") == "42");
  CHECK(c.integer("code") == -3);
  CHECK_FALSE(c.integer("busid"));
  CHECK(c.string("busid") == std::string_view("1b000"));
  CHECK_FALSE(c.integer("seq"));
  CHECK(c.text("seq") == "1234567890123456789012");
  CHECK(c.text("missing").empty());
  CHECK(c.value("missing").is_null());
  std::string out = "k=";
  c.append_text(out, "rank");
  c.append_text(out, "transport");
  CHECK(out == "k=42NET/IB/0");
  const nlohmann::json j = c.to_json();
  CHECK(j == nlohmann::json{{"rank", 42}, {"busid", "1b000"}, {"seq", "1234567890123456789012"}, {"code", -3},
                            {"transport", "NET/IB/0"}});
  c.add_owned("xid", int64_t{79});
  c.add_owned("pid", int64_t{1234567890123456789});  // 19 digits: still a number from a parser
  CHECK(c.integer("xid") == 79);
  CHECK(c.value("pid") == 1234567890123456789);
  CHECK(c.to_json().at("pid").is_number_integer());
  c.clear();
  CHECK(c.empty());
}

TEST_CASE("line numbers and counts hold across odd line lengths and a last line without newline", "[logs]") {
  auto a = LogAnalyzer::create(builtin_signatures());
  REQUIRE(a);
  // Lines of 1..40 bytes (newline counting works eight bytes at a time), then
  // a failure line, more chatter, and the same failure on the unterminated last line.
  std::string text;
  for (int i = 0; i < 997; ++i) text += std::string(static_cast<size_t>(i % 40), 'a' + i % 26) + "\n";
  const std::string warn =
      "node7:41205:41290 [5] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer "
      "node3<36411>";
  text += warn + "\n";
  for (int i = 0; i < 13; ++i) text += "step " + std::to_string(i) + "\n";
  text += warn;
  (*a)->add_text(text, "rank5.log", "");
  const LogAnalysis r = (*a)->finish();
  CHECK(r.stats.lines == 997 + 1 + 13 + 1);
  CHECK(r.stats.matched_lines == 2);
  const Finding* f = nullptr;
  for (const auto& x : r.findings)
    if (x.id == "nccl.socket.connection_closed") f = &x;
  REQUIRE(f);
  CHECK(f->order == 998);
  REQUIRE(!f->provenance.empty());
  CHECK(f->provenance[0].line == 998);
  CHECK(f->fields.at("occurrences") == 2);
}
