// The signature catalogue: size, unique ids, patterns that compile under RE2
// and Hyperscan, causes that exist in the root-cause catalogue, and every
// signature matching its real-format example lines (fixtures/logs/signature_examples.tsv).
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>

#include <re2/re2.h>

#include "analysis/tree/catalogue.hpp"
#include "ccdiag/line_prefix.hpp"
#include "collectors/logs/matcher.hpp"
#include "collectors/logs/signature.hpp"

using namespace ccdiag;
using namespace ccdiag::logs;

namespace {

// Signature ids that the matcher + RE2 confirm on `line` (what the analyser sees).
std::set<std::string> matching_ids(const Matcher& m, const std::vector<Signature>& sigs, const std::string& line) {
  std::vector<Hit> hits;
  const std::string block = line + "\n";
  m.scan(block, hits);
  const LinePrefix p = parse_line_prefix(line);
  std::set<std::string> out;
  for (const auto& h : hits) {
    const auto& s = sigs[h.sig];
    if (!s.extractor.empty()) {
      out.insert(s.id);  // dedicated parsers are tested in kernel tests
      continue;
    }
    RE2 re(s.pattern);
    if (RE2::PartialMatch(re2::StringPiece(p.body.data(), p.body.size()), re)) out.insert(s.id);
  }
  return out;
}

}  // namespace

TEST_CASE("signature catalogue has at least 80 unique, valid signatures", "[logs]") {
  const auto& sigs = builtin_signatures();
  REQUIRE(sigs.size() >= 80);
  std::set<std::string> ids, causes;
  for (const auto& c : cause_catalogue()) causes.insert(c.id);
  for (const auto& s : sigs) {
    INFO(s.id);
    CHECK(ids.insert(s.id).second);
    CHECK(validate_pattern(s.pattern));
    CHECK(!s.summary.empty());
    CHECK(!s.meaning.empty());
    for (const auto& c : s.supports) {
      INFO(c.cause);
      CHECK(causes.count(c.cause) == 1);
      CHECK(c.weight > 0);
    }
  }
  REQUIRE(Matcher::compile(sigs));
}

TEST_CASE("every signature matches its real-format example lines", "[logs]") {
  const auto& sigs = builtin_signatures();
  auto m = Matcher::compile(sigs);
  REQUIRE(m);
  std::ifstream in(CCDIAG_FIXTURES "/logs/signature_examples.tsv");
  REQUIRE(in);
  std::map<std::string, int> examples;
  std::string row;
  while (std::getline(in, row)) {
    if (row.empty() || row[0] == '#') continue;
    const size_t tab = row.find('\t');
    REQUIRE(tab != std::string::npos);
    const std::string id = row.substr(0, tab), line = row.substr(tab + 1);
    INFO(id << " <- " << line);
    const auto got = matching_ids(**m, sigs, line);
    CHECK(got.count(id) == 1);
    ++examples[id];
  }
  for (const auto& s : sigs) {
    INFO("no example line for " << s.id);
    CHECK(examples.count(s.id) == 1);
  }
}

TEST_CASE("a fallback signature yields to the specific one on the same line", "[logs]") {
  const auto& sigs = builtin_signatures();
  auto m = Matcher::compile(sigs);
  REQUIRE(m);
  const auto got = matching_ids(**m, sigs,
                                "<container>:76786:77145 [3] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp "
                                "failed with error No such device");
  CHECK(got.count("nccl.ib.modify_qp_enodev") == 1);
  CHECK(got.count("nccl.ib.modify_qp_failed") == 1);  // both match; the analyser drops the fallback
  for (const auto& s : sigs)
    if (s.id == "nccl.ib.modify_qp_failed") CHECK(s.fallback);
}

TEST_CASE("prefilter expressions drop named groups and trailing catch-alls", "[logs]") {
  CHECK(prefilter_expression(R"(^foo (?P<x>\d+) bar.*$)") == R"(foo (?:\d+) bar)");
  CHECK(prefilter_expression(R"(a\$)") == R"(a\$)");
}

TEST_CASE("signature files: valid entries load, bad ones are errors naming the problem", "[logs]") {
  nlohmann::json ok = {{"id", "site.fs.lustre_evicted"}, {"layer", "system-config"}, {"severity", "error"},
                       {"role", "primary"}, {"pattern", R"(LustreError: .*evicted by (?P<server>\S+))"},
                       {"summary", "Lustre client evicted by {server}"},
                       {"supports", {{{"cause", "rank_stuck_in_host_code"}, {"weight", 4}}}}};
  auto s = signature_from_json(ok);
  REQUIRE(s);
  CHECK(s->layer == Layer::system_config);
  CHECK(s->supports.at(0).weight == 4);
  auto bad = ok;
  bad["pattern"] = "unclosed (group";
  auto e = signature_from_json(bad);
  REQUIRE_FALSE(e);
  CHECK(e.error().message.find("bad pattern") != std::string::npos);
  bad = ok;
  bad["role"] = "culprit";
  CHECK_FALSE(signature_from_json(bad));
  bad = ok;
  bad.erase("id");
  CHECK_FALSE(signature_from_json(bad));
  CHECK_FALSE(load_signature_file(CCDIAG_FIXTURES "/logs/does-not-exist.json"));
}
