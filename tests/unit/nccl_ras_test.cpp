// RAS reply parsers (text and JSON) and the findings derived from them, on
// fixtures written with NCCL's own format strings (tests/fixtures/ras).
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "analysis/tree/catalogue.hpp"
#include "collectors/nccl/ras_findings.hpp"
#include "collectors/nccl/ras_status.hpp"
#include "sys/tcp_client.hpp"

using namespace ccdiag;
using namespace ccdiag::nccl;

namespace {

std::string ras_fixture(const std::string& name) {
  std::ifstream in(std::string(CCDIAG_FIXTURES) + "/ras/" + name, std::ios::binary);
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<const Finding*> with_id(const std::vector<Finding>& fs, const std::string& id) {
  std::vector<const Finding*> v;
  for (const auto& f : fs)
    if (f.id == id) v.push_back(&f);
  return v;
}

}  // namespace

TEST_CASE("RAS text: healthy report", "[nccl][ras]") {
  auto s = parse_ras_text(ras_fixture("status-healthy-2.28.7.txt"));
  CHECK(s.recognised);
  CHECK(s.complete);
  CHECK(s.nccl_version == "2.28.7");
  CHECK(s.cuda_compiled == "13.0");
  CHECK(s.cuda_runtime == 13000);
  CHECK(s.nodes == 2);
  CHECK(s.processes_per_node == 8);
  CHECK(s.processes == 16);
  CHECK(s.gpus == 16);
  REQUIRE(s.groups.size() == 1);
  CHECK(s.groups[0].ranks_per_comm == 16);
  CHECK(s.groups[0].status == "RUNNING");
  CHECK(s.groups[0].errors == "OK");
  CHECK(s.comms.empty());
  CHECK(s.skipped_lines == 0);
  CHECK(ras_to_evidence(s, "t", "h").findings.empty());
}

TEST_CASE("RAS text: missing rank and lagging AllReduce count", "[nccl][ras]") {
  auto s = parse_ras_text(ras_fixture("status-missing-rank-2.28.7.txt"));
  CHECK(s.skipped_lines == 0);
  CHECK(s.collection_time_s == Approx(5.042));
  CHECK(s.timeouts == 1);
  REQUIRE(s.missing_processes.size() == 1);
  CHECK(s.missing_processes[0].place.pid == 39011);
  CHECK(s.missing_processes[0].place.host == "10.0.0.12");
  REQUIRE(s.comms.size() == 1);
  const auto& c = s.comms[0];
  CHECK(c.hash == "0x5c1e0c4a9d2f7b31");
  CHECK(c.label == "#0-0");
  CHECK(c.size == 16);
  REQUIRE(c.missing.size() == 1);
  CHECK(c.missing[0].rank.rank == 11);
  CHECK(c.missing[0].rank.place.cuda_dev == 3);
  REQUIRE(c.count_mismatches.size() == 1);
  CHECK(c.count_mismatches[0].func == "AllReduce");
  REQUIRE(c.count_mismatches[0].groups.size() == 2);
  CHECK(c.count_mismatches[0].groups[0].nranks == 14);
  CHECK(c.count_mismatches[0].groups[0].count == 1207);
  CHECK(c.count_mismatches[0].groups[1].ranks.at(0).rank == 4);

  auto d = ras_to_evidence(s, "127.0.0.1:28028", "node1");
  CHECK(d.evidence.kind == "nccl.ras");
  CHECK(d.evidence.availability.is_ok());
  auto missing = with_id(d.findings, "nccl.ras.missing_rank");
  REQUIRE(missing.size() == 1);  // process-level INCOMPLETE is not double-counted
  CHECK(missing[0]->subject.rank == 11);
  CHECK(missing[0]->subject.comm == std::string("0x5c1e0c4a9d2f7b31"));
  auto lag = with_id(d.findings, "nccl.ras.count_lagging");
  REQUIRE(lag.size() == 1);
  CHECK(lag[0]->subject.rank == 4);
  CHECK(lag[0]->supports.at(0).cause == "rank_skips_collective");
}

TEST_CASE("RAS text: dead peer, remote errors are not primary without a local one", "[nccl][ras]") {
  auto s = parse_ras_text(ras_fixture("status-dead-peer-2.28.7.txt"));
  CHECK(s.skipped_lines == 0);
  CHECK(s.dead_processes_count == 1);
  REQUIRE(s.dead_processes.size() == 1);
  REQUIRE(s.comms.size() == 1);
  REQUIRE(s.comms[0].errors.size() == 1);
  CHECK(s.comms[0].errors[0].kind == "async");
  CHECK(s.comms[0].errors[0].code == 6);
  CHECK(s.comms[0].errors[0].count == 15);
  auto d = ras_to_evidence(s, "f", "");
  auto dead = with_id(d.findings, "nccl.ras.dead_process");
  REQUIRE(dead.size() == 1);
  CHECK(dead[0]->subject.pid == 39011);
  CHECK(dead[0]->role == FindingRole::primary);
  // The comm-level missing rank is the same process: not repeated as missing_rank.
  CHECK(with_id(d.findings, "nccl.ras.missing_rank").empty());
}

TEST_CASE("RAS text: group members after 'N ranks have launched'", "[nccl][ras]") {
  auto s = parse_ras_text(ras_fixture("status-mismatch-2.28.7.txt"));
  CHECK(s.skipped_lines == 0);
  REQUIRE(s.comms.size() == 1);
  const auto& m = s.comms[0].count_mismatches.at(0);
  CHECK(m.func == "AllGather");
  REQUIRE(m.groups.size() == 2);
  CHECK(m.groups[1].count == 309);
  REQUIRE(m.groups[1].ranks.size() == 2);
  CHECK(m.groups[1].ranks[1].rank == 13);
  const auto& e = s.comms[0].errors.at(0);
  CHECK(e.text == "System error");
  CHECK(e.code == 2);
  REQUIRE(e.ranks.size() == 1);
  CHECK(e.ranks[0].rank == 9);
}

TEST_CASE("RAS JSON: NCCL 2.28 missing-rank comma bug is repaired", "[nccl][ras]") {
  const auto text = ras_fixture("status-missing-rank-2.28.7.json");
  CHECK(nlohmann::json::parse(text, nullptr, false).is_discarded());  // really invalid, as NCCL prints it
  auto s = parse_ras_json(text);
  CHECK(s.recognised);
  CHECK(s.repaired);
  REQUIRE(s.comms.size() == 1);
  const auto& c = s.comms[0];
  CHECK(c.size == 16);
  CHECK(c.ranks.size() == 15);
  REQUIRE(c.missing.size() == 1);
  CHECK(c.missing[0].unresponsive);
  CHECK_FALSE(c.missing[0].considered_dead);
  REQUIRE(c.count_mismatches.size() == 1);
  CHECK(c.count_mismatches[0].func == "AllReduce");
  auto d = ras_to_evidence(s, "f", "");
  CHECK(with_id(d.findings, "nccl.ras.missing_rank").size() == 1);
  auto lag = with_id(d.findings, "nccl.ras.count_lagging");
  REQUIRE(lag.size() == 1);
  CHECK(lag[0]->subject.rank == 4);
  CHECK(lag[0]->subject.pid == 39004);
}

TEST_CASE("RAS JSON and text agree on the same situation", "[nccl][ras]") {
  for (auto [txt, js] : {std::pair{"status-mismatch-2.28.7.txt", "status-mismatch-2.29.7.json"},
                         std::pair{"status-dead-peer-2.28.7.txt", "status-dead-peer-2.29.7.json"},
                         std::pair{"status-healthy-2.28.7.txt", "status-healthy-2.29.7.json"}}) {
    auto a = ras_to_evidence(parse_ras_reply(ras_fixture(txt)), "t", "");
    auto b = ras_to_evidence(parse_ras_reply(ras_fixture(js)), "j", "");
    // Text reports list outlier ranks only; JSON lists all. Compare what both
    // name: the primary finding ids, and the ranks blamed for lagging counts.
    std::set<std::string> fa, fb;
    std::set<int> la, lb;
    for (const auto& f : a.findings)
      if (f.role == FindingRole::primary) fa.insert(f.id);
    for (const auto& f : b.findings)
      if (f.role == FindingRole::primary) fb.insert(f.id);
    for (const auto& f : a.findings)
      if (f.id == "nccl.ras.count_lagging") la.insert(f.subject.rank.value_or(-1));
    for (const auto& f : b.findings)
      if (f.id == "nccl.ras.count_lagging") lb.insert(f.subject.rank.value_or(-1));
    CHECK(la == lb);
    INFO(txt);
    CHECK(fa == fb);
  }
}

TEST_CASE("RAS JSON: local error makes remote errors cascades", "[nccl][ras]") {
  auto s = parse_ras_json(ras_fixture("status-mismatch-2.29.7.json"));
  auto d = ras_to_evidence(s, "f", "");
  auto errs = with_id(d.findings, "nccl.ras.async_error");
  REQUIRE(errs.size() == 1);
  CHECK(errs[0]->fields["code"] == 2);
  CHECK(errs[0]->layer == Layer::system_config);
}

TEST_CASE("RAS parsers are total on junk", "[nccl][ras]") {
  for (std::string junk : {std::string(), std::string("\n\n"), std::string("{"), std::string("{\"communicators\": 5}"),
                           std::string("#0-0 () INCOMPLETE\n  Rank x -- GPU"), std::string(10000, 'A'),
                           std::string("Communicators... (.s)\n  0 1 2 3 4 5 6 7\n"),
                           std::string("\x00\xff garbage", 10)}) {
    auto s = parse_ras_reply(junk);
    (void)ras_to_evidence(s, "junk", "");
  }
  CHECK_FALSE(parse_ras_reply("hello\nworld\n").recognised);
  CHECK_FALSE(parse_ras_reply("[1,2]").recognised);
  // A report cut short is recognised but incomplete.
  auto full = ras_fixture("status-missing-rank-2.28.7.txt");
  auto cut = parse_ras_text(full.substr(0, full.find("Warnings")));
  CHECK(cut.recognised);
  CHECK_FALSE(cut.complete);
}

TEST_CASE("every cause a RAS finding supports is in the catalogue", "[nccl][ras]") {
  for (const char* f : {"status-missing-rank-2.28.7.txt", "status-dead-peer-2.28.7.txt", "status-mismatch-2.29.7.json",
                        "status-dead-peer-2.29.7.json"}) {
    auto d = ras_to_evidence(parse_ras_reply(ras_fixture(f)), "f", "");
    for (const auto& fi : d.findings)
      for (const auto& s : fi.supports) {
        INFO(fi.id << " -> " << s.cause);
        CHECK(find_cause(s.cause) != nullptr);
      }
  }
}

TEST_CASE("comm hash spellings normalise to one", "[nccl][ras]") {
  CHECK(normalise_comm_hash("5c1e0c4a9d2f7b31") == "0x5c1e0c4a9d2f7b31");
  CHECK(normalise_comm_hash("0x5C1E0C4A9D2F7B31") == "0x5c1e0c4a9d2f7b31");
  CHECK(normalise_comm_hash("0x1e0c4a9d2f7b31") == "0x001e0c4a9d2f7b31");
  CHECK(normalise_comm_hash("0xzz").empty());
  CHECK(normalise_comm_hash("0x11112222333344445").empty());
}

TEST_CASE("RAS address parsing", "[nccl][ras]") {
  std::string h;
  int p = 0;
  CHECK(split_host_port("localhost:28028", 1, h, p));
  CHECK((h == "localhost" && p == 28028));
  CHECK(split_host_port("[::1]:2900", 1, h, p));
  CHECK((h == "::1" && p == 2900));
  CHECK(split_host_port("10.0.0.1", 28028, h, p));
  CHECK((h == "10.0.0.1" && p == 28028));
  CHECK(split_host_port("fe80::1", 28028, h, p));
  CHECK(h == "fe80::1");
  CHECK_FALSE(split_host_port("host:port", 1, h, p));
  CHECK_FALSE(split_host_port("host:0", 1, h, p));
  CHECK_FALSE(split_host_port("host:99999", 1, h, p));
  CHECK_FALSE(split_host_port("[::1", 1, h, p));
  CHECK(resolve_numeric("localhost") == std::vector<std::string>{"127.0.0.1", "::1"});
}

TEST_CASE("TCP connect to a closed port is 'refused', quickly", "[nccl][ras]") {
  TcpConnection c;
  auto start = std::chrono::steady_clock::now();
  // Port 1 on loopback: nothing listens there in any test environment.
  auto r = c.connect("127.0.0.1", 1, start + std::chrono::seconds(5));
  CHECK(r.status == TcpStatus::refused);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
}
