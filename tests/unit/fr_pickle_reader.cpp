// The restricted pickle reader: what PyTorch writes parses, everything that
// could construct an object is refused, and hostile sizes fail cleanly.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "collectors/fr/dump.hpp"
#include "collectors/fr/pickle_reader.hpp"

using namespace ccdiag;
using namespace ccdiag::fr;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string fx(const std::string& rel) { return std::string(CCDIAG_FIXTURES) + "/fr/" + rel; }

}  // namespace

TEST_CASE("pickle: the jit pickler subset builds plain values", "[fr][pickle]") {
  // {"a": [1, 300, -1, 2**40, 1.5, True, False, None, ("x", "x")]} written
  // the torch way: EMPTY_DICT MARK ... SETITEMS, BINPUT after each string and
  // container, the repeated "x" as BINGET.
  std::string p("\x80\x02}(X\x01\x00\x00\x00" "aq\x00](K\x01M\x2c\x01J\xff\xff\xff\xff\x8a\x08", 26);
  p += std::string("\x00\x00\x00\x00\x00\x01\x00\x00", 8);
  p += std::string("G\x3f\xf8\x00\x00\x00\x00\x00\x00", 9);
  p += std::string("\x88\x89NX\x01\x00\x00\x00" "xq\x01h\x01\x86q\x02" "eq\x03uq\x04.", 23);
  auto doc = parse_pickle(p);
  REQUIRE(doc.ok());
  const PValue& root = doc->root;
  REQUIRE(root.type == PType::dict);
  const PValue* a = doc->get(root, "a");
  REQUIRE(a != nullptr);
  REQUIRE(a->type == PType::list);
  const auto k = doc->kids(*a);
  REQUIRE(k.size() == 9);
  CHECK(k[0].i == 1);
  CHECK(k[1].i == 300);
  CHECK(k[2].i == -1);
  CHECK(k[3].i == (int64_t{1} << 40));
  CHECK(k[4].type == PType::floating);
  CHECK(k[4].d() == 1.5);
  CHECK(k[5].type == PType::boolean);
  CHECK(k[5].i == 1);
  CHECK(k[6].i == 0);
  CHECK(k[7].type == PType::none);
  const PValue& t = k[8];
  REQUIRE(t.type == PType::tuple);
  const auto tk = doc->kids(t);
  REQUIRE(tk.size() == 2);
  CHECK(doc->str(tk[0]) == "x");
  CHECK(tk[0].ref == tk[1].ref);  // memo reference shares the occurrence, never copies
  CHECK(doc->string_ids == 2);    // "a" and "x": BINGET hands out no new id
}

TEST_CASE("pickle: a list appended to again later keeps all its items in order", "[fr][pickle]") {
  // Python batches APPENDS: L = [1, [2], 3] written as ] MARK 1 e, then
  // ] MARK 2 e APPEND, then MARK 3 e: L grows again after another container
  // was closed behind it in the pool, so its items move, in order.
  const std::string p("\x80\x02]q\x00(K\x01" "e](K\x02" "ea(K\x03" "e.", 20);
  auto doc = parse_pickle(p);
  REQUIRE(doc.ok());
  const auto k = doc->kids(doc->root);
  REQUIRE(k.size() == 3);
  CHECK(k[0].i == 1);
  REQUIRE(k[1].type == PType::list);
  REQUIRE(doc->kids(k[1]).size() == 1);
  CHECK(doc->kids(k[1])[0].i == 2);
  CHECK(k[2].i == 3);
}

TEST_CASE("pickle: Python's own protocol 4 re-save is accepted", "[fr][pickle]") {
  // pickle.dumps({"version": "2.10", "entries": []}, protocol=4)
  const std::string p("\x80\x04\x95\x22\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x07version\x94\x8c\x04"
                      "2.10\x94\x8c\x07"
                      "entries\x94]\x94u.",
                      45);
  auto doc = parse_pickle(p);
  REQUIRE(doc.ok());
  const PValue* v = doc->get(doc->root, "version");
  REQUIRE(v != nullptr);
  CHECK(doc->str(*v) == "2.10");
}

TEST_CASE("pickle: object construction is refused with the opcode named", "[fr][pickle]") {
  for (const char* name : {"global_reduce_rank_0", "stack_global_rank_0", "build_rank_0"}) {
    auto doc = parse_pickle(slurp(fx(std::string("bad/") + name)));
    REQUIRE_FALSE(doc.ok());
    CHECK_THAT(doc.error().message, Catch::Contains("refusing pickle opcode"));
  }
  auto g = parse_pickle(slurp(fx("bad/global_reduce_rank_0")));
  CHECK_THAT(g.error().message, Catch::Contains("GLOBAL"));
}

TEST_CASE("pickle: hostile sizes and shapes fail without allocating or recursing", "[fr][pickle]") {
  auto huge = parse_pickle(slurp(fx("bad/huge_length_rank_0")));
  REQUIRE_FALSE(huge.ok());
  CHECK_THAT(huge.error().message, Catch::Contains("truncated"));
  auto deep = parse_pickle(slurp(fx("bad/nested_lists_rank_0")));
  REQUIRE_FALSE(deep.ok());
  CHECK_THAT(deep.error().message, Catch::Contains("nesting deeper"));
  auto marks = parse_pickle(slurp(fx("bad/deep_nesting_rank_0")));
  REQUIRE_FALSE(marks.ok());
  auto trunc = parse_pickle(slurp(fx("bad/truncated_rank_0")));
  REQUIRE_FALSE(trunc.ok());
  CHECK_FALSE(parse_pickle("").ok());
  CHECK_FALSE(parse_pickle(std::string("\x80\x02h\x05.", 4)).ok());        // BINGET of an undefined memo
  CHECK_FALSE(parse_pickle(std::string("\x80\x02\x8a\x09", 4)).ok());      // LONG1 wider than 64 bits
  CHECK_FALSE(parse_pickle(std::string("\x80\x02r\xff\xff\xff\xff.", 8)).ok());  // memo index 2^32-1
  // A list appended to itself through the memo: bounded by depth, no cycle leak.
  CHECK_FALSE(parse_pickle(std::string("\x80\x02]q\x00h\x00a" "h\x00a" "h\x00a", 12) + std::string(70 * 3, 'x')).ok());
}

TEST_CASE("dump: a generated 2.10 dump decodes to compact records", "[fr][dump]") {
  auto d = decode_dump_bytes(slurp(fx("healthy/nccl_trace_rank_0")), "rank0");
  REQUIRE(d.ok());
  CHECK(d->version == "2.10");
  CHECK(d->comm_lib_version == "2.27.5");
  REQUIRE(d->entries.size() == 20);
  REQUIRE(d->pg_configs.size() == 1);
  CHECK(d->pg_configs[0].ranks == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  const FrEntry& e = d->entries.back();
  CHECK(e.record_id == 19);
  CHECK(e.collective_seq == 20);
  CHECK(e.state == FrState::completed);
  CHECK(d->str(e.name) == "nccl:all_reduce");
  CHECK(d->shape(e.in_shapes).text == "[[1024, 1024]]");
  CHECK(d->shape(e.in_shapes).first_numel == 1024 * 1024);
  CHECK(d->str(e.in_dtypes) == "Float");
  REQUIRE(e.stack != kNoIndex);
  CHECK_THAT(d->stacks[e.stack], Catch::Contains("train_step at /workspace/train.py:120"));
  CHECK(d->pgs[e.pg].name == "0");
  CHECK(d->pgs[e.pg].desc == "default_pg");
  // Shapes and stacks are interned: 20 entries, one of each.
  CHECK(d->shapes.size() == 1);
  CHECK(d->stacks.size() == 1);
}

TEST_CASE("dump: JSON flavour (sorted keys, 0 for unseen times) decodes the same", "[fr][dump]") {
  auto j = decode_dump_bytes(slurp(fx("json_missing_rank3/nccl_trace_rank_0.json")), "rank0.json");
  auto p = decode_dump_bytes(slurp(fx("missing_rank3_never_called/nccl_trace_rank_0")), "rank0");
  REQUIRE(j.ok());
  REQUIRE(p.ok());
  REQUIRE(j->entries.size() == p->entries.size());
  CHECK(j->entries.back().collective_seq == p->entries.back().collective_seq);
  CHECK(j->entries.back().state == FrState::scheduled);
  CHECK(j->entries.back().time_completed_ns == kNoTime);
  CHECK(j->stacks.empty());  // JSON dumps never carry frames
  // Ranks whose dumps come in different formats must compare equal.
  CHECK(j->shape(j->entries.back().in_shapes).hash == p->shape(p->entries.back().in_shapes).hash);
  CHECK(j->shape(j->entries.back().in_shapes).text == p->shape(p->entries.back().in_shapes).text);
}

TEST_CASE("dump: versions and defensive fields", "[fr][dump]") {
  CHECK(parse_version("2.10") == std::make_pair(2, 10));
  CHECK_FALSE(parse_version("2.10.1").has_value());
  CHECK_FALSE(parse_version("x").has_value());
  auto bad = decode_dump_bytes(slurp(fx("bad/unknown_version_rank_0")), "f");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().one_line(), Catch::StartsWith("f: unsupported flight-recorder version 9.1"));
  // fr_trace's own tests: seq ids as strings, dtype as a bare string.
  auto d = decode_dump_bytes(
      R"({"version":"2.8","pg_config":{"0":{"name":"0","desc":"default_pg","ranks":"[0, 1]"}},"entries":[)"
      R"({"record_id":0,"process_group":["0","default_pg"],"collective_seq_id":"3","profiling_name":"nccl:all_reduce",)"
      R"("input_sizes":[[4,4]],"output_sizes":[[4,4]],"input_dtypes":"float32","state":"completed"}]})",
      "j");
  REQUIRE(d.ok());
  REQUIRE(d->entries.size() == 1);
  CHECK(d->entries[0].collective_seq == 3);
  CHECK(d->str(d->entries[0].in_dtypes) == "float32");
  CHECK(d->entries[0].time_created_ns == kNoTime);
}

TEST_CASE("dump: a reused parse buffer decodes each file as a fresh one would", "[fr][dump]") {
  // Loader threads parse thousands of dumps into one PickleDoc: nothing of
  // the previous file (values, containers, occurrence ids) may leak.
  PickleDoc scratch;
  const std::string big = slurp(fx("tp_rank9_stalls_tp_group/nccl_trace_rank_0"));
  const std::string small = slurp(fx("healthy/nccl_trace_rank_3"));
  auto a = decode_dump_bytes(big, "big", &scratch);
  auto bad = decode_dump_bytes(slurp(fx("bad/truncated_rank_0")), "bad", &scratch);
  auto b = decode_dump_bytes(small, "small", &scratch);
  auto fresh = decode_dump_bytes(small, "small");
  REQUIRE(a.ok());
  REQUIRE_FALSE(bad.ok());
  REQUIRE(b.ok());
  REQUIRE(fresh.ok());
  REQUIRE(b->entries.size() == fresh->entries.size());
  for (size_t i = 0; i < b->entries.size(); ++i) {
    CHECK(b->entries[i].collective_seq == fresh->entries[i].collective_seq);
    CHECK(b->str(b->entries[i].name) == fresh->str(fresh->entries[i].name));
    CHECK(b->shape(b->entries[i].in_shapes).text == fresh->shape(fresh->entries[i].in_shapes).text);
    CHECK(b->pgs[b->entries[i].pg].name == fresh->pgs[fresh->entries[i].pg].name);
  }
  CHECK(b->stacks == fresh->stacks);
  CHECK(b->strings == fresh->strings);
}
