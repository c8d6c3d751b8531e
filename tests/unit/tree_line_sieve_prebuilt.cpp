// The line sieve's database is compiled at build time and embedded in the
// binary (tools/sigdb); a sieve takes it only when its key (engine version,
// every literal, its flags and set) is the sieve's own, and then marks every
// line exactly as a database compiled at run time does.
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
  ~PrebuiltGuard() { set_prebuilt_sieve(PrebuiltSieve{}); }
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
  set_prebuilt_sieve(PrebuiltSieve{data, bytes->size(), compiled.key()});
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
  set_prebuilt_sieve(PrebuiltSieve{reinterpret_cast<const unsigned char*>(junk.data()), junk.size(), compiled.key()});
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

TEST_CASE("the log facts' sieve has a database to embed", "[sieve-prebuilt]") {
  const LineSieve& sieve = LogFactExtractor::sieve();
#ifdef CCDIAG_HAVE_HYPERSCAN
  // An incomplete literal set (some check that needs no literal) would leave
  // nothing to embed and every large log would be read line by line.
  CHECK(sieve.key() != 0);
  CHECK(sieve.serialize().ok());
#else
  CHECK(sieve.key() == 0);
#endif
}
