// Cross-rank flight-recorder analysis on generated dump sets
// (tests/fixtures/fr/gen_fr_dumps.py): the right kind, process group, seq and
// culprit ranks, including the cases where PyTorch's fr_trace is wrong or
// silent (docs/fr.md, Tests and benchmark).
#include <catch2/catch.hpp>

#include <algorithm>

#include "analysis/cross_rank/fr_analysis.hpp"
#include "analysis/cross_rank/fr_findings.hpp"
#include "collectors/fr/loader.hpp"

using namespace ccdiag;
using namespace ccdiag::fr;

namespace {

std::string fx(const std::string& rel) { return std::string(CCDIAG_FIXTURES) + "/fr/" + rel; }

struct Run {
  std::vector<RankDump> dumps;
  FrAnalysis a;
};

Run analyse(const std::string& dir, const std::string& prefix = "") {
  LoadOptions lo{prefix, 2};
  auto files = discover_dumps({fx(dir)}, lo);
  REQUIRE(files.ok());
  auto loaded = load_dumps(*files, lo);
  REQUIRE(loaded.bad.empty());
  Run r{std::move(loaded.dumps), {}};
  r.a = analyze_fr(r.dumps);
  return r;
}

std::vector<const FrFinding*> roots(const FrAnalysis& a) {
  std::vector<const FrFinding*> out;
  for (const auto& f : a.findings)
    if (!f.caused_by && f.kind != "slow_rank" && f.kind != "no_dump") out.push_back(&f);
  return out;
}

}  // namespace

TEST_CASE("fr: healthy job, no findings", "[fr][analysis]") {
  auto r = analyse("healthy");
  CHECK(r.a.ranks == 8);
  CHECK(r.a.entries == 160);
  CHECK(r.a.findings.empty());
}

TEST_CASE("fr: rank 3 never calls seq 30", "[fr][analysis]") {
  auto r = analyse("missing_rank3_never_called");
  auto rs = roots(r.a);
  REQUIRE(rs.size() == 1);
  CHECK(rs[0]->kind == "missing_ranks");
  CHECK(rs[0]->process_group == "0");
  CHECK(rs[0]->seq == 30);
  CHECK(rs[0]->ranks == std::vector<int>{3});
  CHECK(rs[0]->details["missing"][0]["reason"] == "never_called");
  // Call site of the collective the others are in is not the culprit's; the
  // culprit's stack is where it was last seen.
  CHECK_THAT(rs[0]->stack, Catch::Contains("train.py"));
  auto fs = to_findings(r.a, r.dumps);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].id == "fr.missing_ranks");
  CHECK(fs[0].subject.rank == 3);
  CHECK(fs[0].subject.seq == 30);
  CHECK(fs[0].subject.process_group == "0");
  REQUIRE_FALSE(fs[0].supports.empty());
  CHECK(fs[0].supports[0].cause == "rank_skips_collective");
}

TEST_CASE("fr: ranks 2 and 6 missing, healthy ranks enqueue 3 more ops (tail)", "[fr][analysis]") {
  auto r = analyse("missing_ranks_2_6_with_tail");
  auto rs = roots(r.a);
  REQUIRE(rs.size() == 1);  // fr_trace also reports seq 26, 27, 28 with partly wrong sets
  CHECK(rs[0]->seq == 25);
  CHECK(rs[0]->ranks == std::vector<int>{2, 6});
  CHECK(rs[0]->details["tail_seqs"] == 3);
}

TEST_CASE("fr: type mismatch blames the odd rank by majority, not file order", "[fr][analysis]") {
  auto r = analyse("type_mismatch_rank5_first_file");
  auto rs = roots(r.a);
  REQUIRE(rs.size() == 1);
  CHECK(rs[0]->kind == "type_mismatch");
  CHECK(rs[0]->seq == 20);
  CHECK(rs[0]->ranks == std::vector<int>{5});
  CHECK(rs[0]->op == "nccl:all_gather");
  CHECK_THAT(rs[0]->stack, Catch::Contains("log_metrics at /workspace/train.py:233"));
  CHECK(rs[0]->stack_rank == 5);
}

TEST_CASE("fr: size and dtype mismatches", "[fr][analysis]") {
  auto s = analyse("size_mismatch_rank2");
  REQUIRE(roots(s.a).size() == 1);
  CHECK(roots(s.a)[0]->kind == "size_mismatch");
  CHECK(roots(s.a)[0]->ranks == std::vector<int>{2});
  CHECK(roots(s.a)[0]->seq == 20);
  auto d = analyse("dtype_mismatch_rank6");
  REQUIRE(roots(d.a).size() == 1);
  CHECK(roots(d.a)[0]->kind == "dtype_mismatch");
  CHECK(roots(d.a)[0]->ranks == std::vector<int>{6});
  auto fs = to_findings(d.a, d.dumps);
  CHECK(fs[0].supports[0].cause == "mismatched_collectives");
}

TEST_CASE("fr: all entered, none completed -> hang below the framework (fr_trace is silent)", "[fr][analysis]") {
  for (const char* dir : {"hang_all_entered_none_completed", "hang_all_entered_timing"}) {
    auto r = analyse(dir);
    auto rs = roots(r.a);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0]->kind == "hang_no_completion");
    CHECK(rs[0]->seq == 20);
    CHECK(rs[0]->ranks.size() == 8);
    auto fs = to_findings(r.a, r.dumps);
    // Supports lower layers, argues against the framework causes.
    bool lower = false, against = false;
    for (const auto& s : fs[0].supports) {
      if (s.cause == "nccl_bug" && s.weight > 1) lower = true;
      if (s.cause == "rank_skips_collective" && s.weight < 1) against = true;
    }
    CHECK(lower);
    CHECK(against);
  }
  auto t = analyse("hang_all_entered_timing");
  CHECK(roots(t.a)[0]->details["started"] == 8);
}

TEST_CASE("fr: slow rank with statistics (fr_trace is silent)", "[fr][analysis]") {
  auto r = analyse("slow_rank4_200ms");
  REQUIRE(r.a.findings.size() == 1);
  const auto& f = r.a.findings[0];
  CHECK(f.kind == "slow_rank");
  CHECK(f.ranks == std::vector<int>{4});
  const auto& st = f.details["stats"][0];
  CHECK(st["times_last"] == 40);
  CHECK(st["median_lag_ms"].get<double>() > 150.0);
  CHECK(st["median_lag_ms"].get<double>() < 250.0);
  CHECK(st.contains("median_duration_ms"));
}

TEST_CASE("fr: a slow rank missing from the last collective has not arrived yet", "[fr][analysis]") {
  auto r = analyse("slow_rank4_not_arrived");
  auto rs = roots(r.a);
  REQUIRE(rs.size() == 1);
  CHECK(rs[0]->ranks == std::vector<int>{4});
  CHECK(rs[0]->details["missing"][0]["reason"] == "slow_not_arrived");
  auto fs = to_findings(r.a, r.dumps);
  CHECK(fs[0].supports[0].cause == "straggler_or_timeout_too_short");
}

TEST_CASE("fr: TP group stall is the cause, default group's missing ranks its consequence", "[fr][analysis]") {
  auto r = analyse("tp_rank9_stalls_tp_group");
  REQUIRE(r.a.findings.size() == 2);
  const auto& root = r.a.findings[0];
  CHECK(root.kind == "missing_ranks");
  CHECK(root.process_group == "2");
  CHECK(root.pg_desc == "mesh_tp");
  CHECK(root.seq == 13);
  CHECK(root.ranks == std::vector<int>{9});
  CHECK_FALSE(root.caused_by.has_value());
  const auto& cascade = r.a.findings[1];
  CHECK(cascade.process_group == "0");
  CHECK(cascade.ranks == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15});
  REQUIRE(cascade.caused_by.has_value());
  CHECK(*cascade.caused_by == "process group 2 seq 13");
  auto fs = to_findings(r.a, r.dumps);
  CHECK(fs[1].role == FindingRole::cascade);
  CHECK(fs[1].supports.empty());
}

TEST_CASE("fr: healthy batch_isend_irecv ring has no false positive (fr_trace reports many)", "[fr][analysis][p2p]") {
  auto r = analyse("p2p_ring_healthy");
  CHECK(r.a.findings.empty());
}

TEST_CASE("fr: rank 3 skips a p2p batch: its peer's send has no recv", "[fr][analysis][p2p]") {
  auto r = analyse("p2p_ring_rank3_missing_batch");
  auto rs = roots(r.a);
  REQUIRE(rs.size() == 1);
  CHECK(rs[0]->kind == "missing_ranks");
  CHECK(rs[0]->seq_kind == "p2p");
  CHECK(rs[0]->seq == 10);
  CHECK(rs[0]->ranks == std::vector<int>{3});
}

TEST_CASE("fr: coalesced groups compare as a unit", "[fr][analysis]") {
  CHECK(analyse("coalesced_uneven_allgather_healthy").a.findings.empty());
  auto r = analyse("coalesced_uneven_allgather_rank2_size");
  auto rs = roots(r.a);
  REQUIRE(rs.size() == 1);
  CHECK(rs[0]->kind == "size_mismatch");
  CHECK(rs[0]->seq == 6);
  CHECK(rs[0]->ranks == std::vector<int>{2});
}

TEST_CASE("fr: ring buffers that no longer cover old seqs are not missing ranks", "[fr][analysis]") {
  auto r = analyse("ring_buffer_wrapped_rank6_missing");
  auto rs = roots(r.a);
  REQUIRE(rs.size() == 1);
  CHECK(rs[0]->seq == 60);
  CHECK(rs[0]->ranks == std::vector<int>{6});
}

TEST_CASE("fr: no dump from the rank every other rank waits for", "[fr][analysis]") {
  auto r = analyse("rank7_no_dump_others_hang");
  auto rs = roots(r.a);
  REQUIRE(rs.size() == 1);
  CHECK(rs[0]->kind == "missing_ranks");
  CHECK(rs[0]->seq == 12);
  CHECK(rs[0]->ranks == std::vector<int>{7});
  CHECK(rs[0]->details["missing"][0]["reason"] == "no_dump");
  auto fs = to_findings(r.a, r.dumps);
  CHECK(fs[0].supports[0].cause == "rank_process_died");
}

TEST_CASE("fr: versions, JSON dumps, prefixes and host names", "[fr][analysis][loader]") {
  for (const char* dir : {"json_missing_rank3", "version_2_4_missing_rank3"}) {
    auto r = analyse(dir);
    REQUIRE(roots(r.a).size() == 1);
    CHECK(roots(r.a)[0]->ranks == std::vector<int>{3});
  }
  auto p = analyse("custom_prefix_missing_rank1", "job8812_fr_dump_");
  REQUIRE(roots(p.a).size() == 1);
  CHECK(roots(p.a)[0]->ranks == std::vector<int>{1});
  auto h = analyse("multihost_names_missing_rank11");
  REQUIRE(roots(h.a).size() == 1);
  CHECK(roots(h.a)[0]->ranks == std::vector<int>{11});
  auto fs = to_findings(h.a, h.dumps);
  CHECK(fs[0].subject.host == "node02");
}

TEST_CASE("fr: loader names, prefix filter, JSON twins and duplicates", "[fr][loader]") {
  CHECK(rank_from_name("nccl_trace_rank_17") == 17);
  CHECK(rank_from_name("comm_lib_trace_rank_3.json") == 3);
  CHECK(rank_from_name("node02.pci3_rank_5") == 5);
  CHECK_FALSE(rank_from_name("README").has_value());
  auto none = discover_dumps({fx("healthy")}, LoadOptions{"other_prefix_", 1});
  REQUIRE(none.ok());
  CHECK(none->empty());
  auto missing = discover_dumps({fx("does_not_exist")}, {});
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().one_line(), Catch::Contains("no such file"));
  // A dump and its JSON twin count once; two different dumps for one rank do not.
  auto twins = discover_dumps({fx("healthy/nccl_trace_rank_0"), fx("json_missing_rank3/nccl_trace_rank_1.json")}, {});
  REQUIRE(twins.ok());
  CHECK(twins->size() == 2);
  auto dup = discover_dumps({fx("healthy/nccl_trace_rank_0"), fx("size_mismatch_rank2/nccl_trace_rank_0")}, {});
  REQUIRE_FALSE(dup.ok());
  CHECK_THAT(dup.error().message, Catch::Contains("two dumps for rank 0"));
}

TEST_CASE("fr: dumps from two jobs are refused", "[fr][loader]") {
  auto files = discover_dumps({fx("mixed_jobs")}, {});
  REQUIRE(files.ok());
  auto loaded = load_dumps(*files, {});
  REQUIRE(loaded.bad.empty());
  auto e = check_same_job(loaded.dumps);
  REQUIRE(e.has_value());
  CHECK_THAT(e->message, Catch::Contains("two different jobs"));
}

// Ports of test_fr_analysis.py FlightRecorderE2ETest.testBuildDB (§3.1 item 5).
TEST_CASE("fr: fr_trace testBuildDB scenarios agree", "[fr][analysis][fr_trace]") {
  // 1: all_reduce on pg 0 + all_reduce on two different groups named "1": 3 collectives, all pass.
  auto c1 = analyse("fr_trace_build_db_1");
  CHECK(c1.a.findings.empty());
  CHECK(c1.a.groups == 3);
  CHECK(c1.a.collectives_checked == 3);
  // 2: allreduce_coalesced: 1 collective, pass.
  auto c2 = analyse("fr_trace_build_db_2");
  CHECK(c2.a.findings.empty());
  CHECK(c2.a.collectives_checked == 1);
  // 3: broadcast, broadcast, coalesced: one unit, pass.
  auto c3 = analyse("fr_trace_build_db_3");
  CHECK(c3.a.findings.empty());
  CHECK(c3.a.collectives_checked == 1);
  // 4: _broadcast_oop [[4,4]],[[5,5]] vs [[4,4]],[[4,4]] + ALLGATHER_coalesced: fails.
  auto c4 = analyse("fr_trace_build_db_4");
  REQUIRE(c4.a.findings.size() == 1);
  CHECK(c4.a.findings[0].kind == "size_mismatch");
  CHECK(c4.a.findings[0].seq == 1);
  // 5: _reduce_oop x2 + REDUCE_SCATTER_coalesced: pass.
  auto c5 = analyse("fr_trace_build_db_5");
  CHECK(c5.a.findings.empty());
  CHECK(c5.a.collectives_checked == 1);
  // 6: rank 1 has an extra (completed) coalesced group: 2 collectives, both pass
  // (completed means every member took part; rank 0 lost that record).
  auto c6 = analyse("fr_trace_build_db_6");
  CHECK(c6.a.findings.empty());
  CHECK(c6.a.collectives_checked == 2);
}
