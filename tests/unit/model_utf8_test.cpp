// UTF-8 repair before JSON: cut code points, stray bytes, overlong forms.
#include <catch2/catch.hpp>

#include "ccdiag/utf8.hpp"

using namespace ccdiag;

TEST_CASE("utf8_prefix never ends inside a code point", "[utf8]") {
  const std::string line = "loss nan \xF0\x9F\x94\xA5 at step 7";  // U+1F525 (4 bytes) at offset 9
  for (size_t cut = 9; cut <= 13; ++cut) {
    const auto p = utf8_prefix(line, cut);
    CHECK(valid_utf8(p));
    CHECK(p.size() == (cut < 13 ? 9u : 13u));
  }
  CHECK(utf8_prefix("abc", 10) == "abc");
  CHECK(utf8_prefix("\xC3\xA9t\xC3\xA9", 1).empty());
}

TEST_CASE("repair_utf8 replaces invalid bytes and drops a cut tail", "[utf8]") {
  CHECK(repair_utf8("ok \xC3\xA9") == "ok \xC3\xA9");
  CHECK(repair_utf8("a\xFF" "b") == "a\xEF\xBF\xBD" "b");
  CHECK(repair_utf8("a\xC0\xAF" "b") == "a\xEF\xBF\xBD\xEF\xBF\xBD" "b");  // overlong '/'
  CHECK(repair_utf8("a\xED\xA0\x80") == "a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  CHECK(repair_utf8("fire \xF0\x9F\x94") == "fire ");  // emoji cut at the end of a line
  CHECK(valid_utf8(repair_utf8("\x80\x80\xF4\x90\x80\x80")));
}

TEST_CASE("json_text never throws on text from outside", "[utf8]") {
  nlohmann::json j = {{"line", "rank 3: \xF0\x9F\x94"}, {"list", {"\xFF", "ok"}}};
  j["bad\xFEkey"] = 1;
  CHECK_THROWS(j.dump());  // the failure this guards against
  std::string out;
  REQUIRE_NOTHROW(out = json_text(j));
  const auto back = nlohmann::json::parse(out);
  CHECK(back["line"] == "rank 3: ");
  CHECK(back["list"][0] == "\xEF\xBF\xBD");
  CHECK(back.contains("bad\xEF\xBF\xBDkey"));
}
