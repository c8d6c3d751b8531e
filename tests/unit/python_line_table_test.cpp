// Line-table decoders against tables and co_lines() ranges taken from the real
// interpreters: the function below compiled by CPython 3.10.13, 3.11.2
// (Debian) and 3.12.1, its co_linetable bytes and co_lines() output recorded.
//
//   def f(a, b):            # line 2 (co_firstlineno)
//       x = a + b
//       if x > 3:
//           y = [i for i in range(x)]
//       else:
//           y = None
//
//       return (x,
//               y)
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "collectors/python/line_table.hpp"

using namespace ccdiag::python;

namespace {

std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
  return out;
}

using Ranges = std::vector<std::tuple<int, int, int>>;  // start, end (bytes), line (-1 = None)

template <class F>
void check_ranges(F decode, const std::string& table, const Ranges& r) {
  for (const auto& [s, e, line] : r)
    for (int off = s; off < e; off += 2) {
      INFO("offset " << off);
      CHECK(decode(table, 2, off) == line);
    }
  // Past the end of the table: no line.
  CHECK(decode(table, 2, std::get<1>(r.back()) + 2) == -1);
  // Not started yet: the def line.
  CHECK(decode(table, 2, -2) == 2);
}

}  // namespace

TEST_CASE("python 3.10 linetable matches co_lines() of CPython 3.10.13", "[python]") {
  const auto t = unhex("0801080112010204020104ff04fe0202020104ff");
  const Ranges r{{0, 8, 3},   {8, 16, 4},  {16, 34, 5}, {34, 36, 9}, {36, 38, 10},
                 {38, 42, 9}, {42, 46, 7}, {46, 48, 9}, {48, 50, 10}, {50, 54, 9}};
  check_ranges(line_for_offset_310, t, r);
}

TEST_CASE("python 3.10 linetable: -128 means no line, zero-length ranges carry deltas", "[python]") {
  // (4, +1) (0, +100) (2, -128) (2, +1): zero-length entry folds into the next.
  const std::string t{"\x04\x01\x00\x64\x02\x80\x02\x01", 8};
  CHECK(line_for_offset_310(t, 10, 0) == 11);
  CHECK(line_for_offset_310(t, 10, 2) == 11);
  CHECK(line_for_offset_310(t, 10, 4) == -1);   // the 0-length +100 is carried, then "no line"
  CHECK(line_for_offset_310(t, 10, 6) == 112);  // 10 + 1 + 100 + 1
  CHECK(line_for_offset_310(t, 10, 8) == -1);
}

TEST_CASE("python 3.11 location table matches co_lines() of Debian's CPython 3.11.2", "[python]") {
  const auto t = unhex(
      "8000d80809884189058041d80708883182758075d80c21d00c219d05986199089c08d00c21d10c21d40c2188018801e00c108801e00c0dd8"
      "0c0df003010c0ff00001050f");
  const Ranges r{{0, 2, 2},   {2, 4, 3},   {4, 6, 3},   {6, 10, 3},  {10, 12, 3}, {12, 14, 4}, {14, 16, 4},
                 {16, 22, 4}, {22, 24, 4}, {24, 26, 5}, {26, 28, 5}, {28, 40, 5}, {40, 42, 5}, {42, 46, 5},
                 {46, 56, 5}, {56, 58, 5}, {58, 62, 5}, {62, 72, 5}, {72, 74, 5}, {74, 76, 5}, {76, 78, 7},
                 {78, 80, 7}, {80, 82, 9}, {82, 84, 10}, {84, 86, 9}, {86, 88, 9}};
  check_ranges(line_for_offset_311, t, r);
}

TEST_CASE("python 3.12 location table with a no-location range matches co_lines() of 3.12.1", "[python]") {
  const auto t = unhex(
      "8000d80809884189058041d8070888318275dc181d98619b08d60c2190318a51d00c218801d00c21f008000d0ed80c0df003010c0ff0000105"
      "0ff005000d118801e00c0dd80c0df003010c0ff00001050ff9f209000d22");
  const Ranges r{{0, 2, 2},   {2, 12, 3},  {12, 22, 4}, {22, 70, 5},  {70, 72, 9},  {72, 74, 10}, {74, 78, 9},
                 {78, 82, 7}, {82, 84, 9}, {84, 86, 10}, {86, 90, 9}, {90, 94, -1}, {94, 100, 5}};
  check_ranges(line_for_offset_311, t, r);
}

TEST_CASE("python location table decoders are total on garbage", "[python]") {
  CHECK(line_for_offset_311("", 5, 0) == -1);
  CHECK(line_for_offset_311(std::string("\x01\x02", 2), 5, 0) == -1);  // starts with a continuation byte
  // Long form whose varint runs to the end of the buffer and makes the line
  // negative: stops at the end, reports "no line".
  CHECK(line_for_offset_311(std::string("\xf0\x7f\x7f\x7f", 4), 5, 0) == -1);
  // Line delta -128 below line 0 in 3.10: no line either.
  CHECK(line_for_offset_310(std::string("\x02\x81", 2), 5, 0) == -1);
  CHECK(line_for_offset_310(std::string("\x02", 1), 5, 0) == -1);     // odd length
  CHECK(line_for_offset_310("", 5, 100) == -1);
}
