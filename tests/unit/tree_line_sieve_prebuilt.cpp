// The log facts' literal databases (the line sieve, the gates of the signal
// and cue tables) are compiled at build time and embedded in the binary
// (tools/sigdb); a database takes embedded bytes only when their key (engine
// version, every literal, its flags and owner) is its own, and then answers
// exactly as one compiled at run time does.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "analysis/tree/literal_gate.hpp"
#include "analysis/tree/log_facts.hpp"

using namespace ccdiag;

namespace {

// Restores "no embedded sieve" however a test ends: the registration is
// process-wide and other tests compile their own sieves.
struct PrebuiltGuard {
  ~PrebuiltGuard() { clear_prebuilt_literals(); }
};

const char* const kBlock =
    "step 100 loss 2.31\n"
    "host:1:2 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
    "ERROR something failed\n"
    "plain progress line\n"
    "\x1b[31mred\x1b[0m\n"
    "no newline at the end";

}  // namespace

TEST_CASE("an embedded line sieve is used only under its own key and marks what a compiled one marks",
          "[sieve-prebuilt]") {
  PrebuiltGuard guard;
  LineLiterals facts{{"NCCL", "Bootstrap"}, {"error"}, true};
  LineLiterals blocks{{"\x1b"}, {}, true};
  const std::vector<LineLiterals> sets{facts, blocks};

  LineSieve compiled(sets);
#ifdef CCDIAG_HAVE_HYPERSCAN
  REQUIRE(std::string(compiled.source()) == "compiled");
  REQUIRE(compiled.key() != 0);
  auto bytes = compiled.serialize();
  REQUIRE(bytes.ok());
  REQUIRE(!bytes->empty());

  std::vector<uint8_t> want;
  REQUIRE(compiled.mark_lines(kBlock, want));
  REQUIRE(want == std::vector<uint8_t>{0, 1, 1, 0, 2, 0});

  const auto* data = reinterpret_cast<const unsigned char*>(bytes->data());
  add_prebuilt_literals(PrebuiltLiterals{data, bytes->size(), compiled.key()});
  LineSieve embedded(sets);
  CHECK(std::string(embedded.source()) == "prebuilt");
  CHECK(embedded.key() == compiled.key());
  std::vector<uint8_t> got;
  REQUIRE(embedded.mark_lines(kBlock, got));
  CHECK(got == want);

  // Another literal set has another key: compiled, never the embedded bytes.
  LineLiterals more = facts;
  more.exact.push_back("Watchdog");
  LineSieve other({more, blocks});
  CHECK(std::string(other.source()) == "compiled");
  CHECK(other.key() != compiled.key());

  // A key that matches but bytes Hyperscan refuses: compiled, still exact.
  const std::string junk(bytes->size(), 'x');
  clear_prebuilt_literals();
  add_prebuilt_literals(PrebuiltLiterals{reinterpret_cast<const unsigned char*>(junk.data()), junk.size(), compiled.key()});
  LineSieve refused(sets);
  CHECK(std::string(refused.source()) == "compiled");
  got.clear();
  REQUIRE(refused.mark_lines(kBlock, got));
  CHECK(got == want);
#else
  CHECK(std::string(compiled.source()) == "none");
  CHECK(!compiled.serialize().ok());
#endif
}

TEST_CASE("an embedded literal gate is used only under its own key and opens what a compiled one opens",
          "[sieve-prebuilt]") {
  PrebuiltGuard guard;
  const std::vector<std::vector<std::string_view>> needles{{"NCCL WARN"}, {"Bootstrap", "bootstrap"}, {}};
  const std::string line = "host:1:2 [0] NCCL INFO Bootstrap : Using eth0";
  // compile_after 0: the database is made on the first line.
  LiteralGate compiled(needles, 0);
  std::vector<uint64_t> want, got;
  compiled.candidates(line, want);
#ifdef CCDIAG_HAVE_HYPERSCAN
  CHECK(std::string(compiled.source()) == "compiled");
  CHECK(!LiteralGate::test(want, 0));
  CHECK(LiteralGate::test(want, 1));
  CHECK(LiteralGate::test(want, 2));  // no literal: always tried
  auto bytes = compiled.serialize();
  REQUIRE(bytes.ok());
  add_prebuilt_literals(
      PrebuiltLiterals{reinterpret_cast<const unsigned char*>(bytes->data()), bytes->size(), compiled.key()});
  LiteralGate embedded(needles, 0);
  embedded.candidates(line, got);
  CHECK(std::string(embedded.source()) == "prebuilt");
  CHECK(got == want);
  // The same literals owned by other entries are another gate.
  LiteralGate other({{"Bootstrap", "bootstrap"}, {"NCCL WARN"}, {}}, 0);
  CHECK(other.key() != compiled.key());
  other.candidates(line, got);
  CHECK(std::string(other.source()) == "compiled");
#else
  CHECK(std::string(compiled.source()) == "none");
#endif
}

TEST_CASE("the log facts' literal databases all have bytes to embed", "[sieve-prebuilt]") {
  const auto dbs = LogFactExtractor::literal_databases();
  REQUIRE(dbs.size() == 3);
  std::vector<uint64_t> keys;
  for (const auto& [name, db] : dbs) {
    INFO(name);
#ifdef CCDIAG_HAVE_HYPERSCAN
    // An incomplete sieve (some check that needs no literal) would leave
    // nothing to embed and every large log would be read line by line.
    CHECK(db->key() != 0);
    CHECK(db->serialize().ok());
    keys.push_back(db->key());
#else
    CHECK(db->key() == 0);
#endif
  }
#ifdef CCDIAG_HAVE_HYPERSCAN
  CHECK(keys[0] != keys[1]);
  CHECK(keys[1] != keys[2]);
#endif
}
