// The walker over a CPython 3.11 runtime laid out in byte buffers with the
// verified 3.11 offsets: one interpreter, one thread, two frames, a kind-2
// (UCS-2) function name, and the GIL held by that thread.
#include <catch2/catch.hpp>

#include <cstring>

#include "collectors/python/layout.hpp"
#include "collectors/python/walker.hpp"

using namespace ccdiag;

namespace {

struct Mem {
  std::vector<uint8_t> b = std::vector<uint8_t>(0x4000);
  uint64_t base = 0x10000;
  template <class T>
  void put(uint64_t addr, T v) {
    std::memcpy(b.data() + (addr - base), &v, sizeof v);
  }
  void bytes(uint64_t addr, const std::string& s) { std::memcpy(b.data() + (addr - base), s.data(), s.size()); }
  // Compact str: ASCII data at +48 (3.11), UCS-2 at +72.
  void str(uint64_t addr, const std::u16string& s, bool ascii) {
    put<int64_t>(addr + 16, static_cast<int64_t>(s.size()));
    const uint32_t kind = ascii ? 1 : 2;
    put<uint32_t>(addr + 32, (kind << 2) | (1u << 5) | (ascii ? 1u << 6 : 0));
    for (size_t i = 0; i < s.size(); ++i) {
      if (ascii) put<uint8_t>(addr + 48 + i, static_cast<uint8_t>(s[i]));
      else put<uint16_t>(addr + 72 + 2 * i, static_cast<uint16_t>(s[i]));
    }
  }
};

}  // namespace

TEST_CASE("python walker reads a 3.11 runtime from buffers", "[python]") {
  const auto l = *python::static_layout(11);
  Mem m;
  const uint64_t rt = 0x10000, interp = 0x10400, ts = 0x10800, cframe = 0x10c00, f1 = 0x10d00, f2 = 0x10e00,
                 code1 = 0x11000, code2 = 0x11200, s_file = 0x11400, s_name1 = 0x11500, s_q1 = 0x11600,
                 s_name2 = 0x11700, table = 0x11800;
  m.put<uint64_t>(rt + 40, interp);
  m.put<uint64_t>(rt + 368, ts);  // GIL last_holder
  m.put<int32_t>(rt + 376, 1);    // GIL locked
  m.put<uint64_t>(interp + 16, ts);
  m.put<uint64_t>(ts + 16, interp);
  m.put<uint64_t>(ts + 56, cframe);
  m.put<uint64_t>(ts + 152, 0x7f0000001000);
  m.put<int64_t>(ts + 160, 4242);
  m.put<uint64_t>(cframe + 8, f1);
  // f1: newest, in code1 at byte offset 4 -> line 11; f2: entry, not started -> firstlineno.
  m.put<uint64_t>(f1 + 32, code1);
  m.put<uint64_t>(f1 + 48, f2);
  m.put<uint64_t>(f1 + 56, code1 + 184 + 4);
  m.put<uint64_t>(f2 + 32, code2);
  m.put<uint64_t>(f2 + 56, code2 + 184 - 2);
  m.put<uint8_t>(f2 + 68, 1);
  for (uint64_t c : {code1, code2}) {
    m.put<uint64_t>(c + 112, s_file);
    m.put<uint64_t>(c + 136, table);
  }
  m.put<uint64_t>(code1 + 120, s_name1);
  m.put<uint64_t>(code1 + 128, s_q1);
  m.put<int32_t>(code1 + 72, 10);
  m.put<uint64_t>(code2 + 120, s_name2);
  m.put<uint64_t>(code2 + 128, s_name2);
  m.put<int32_t>(code2 + 72, 30);
  m.str(s_file, u"train.py", true);
  m.str(s_name1, u"f\u00fcnf\u6587", false);
  m.str(s_q1, u"T.f\u00fcnf\u6587", false);
  m.str(s_name2, u"<module>", true);
  // Location table: [0,4) line +0 (code 13, delta 0), [4,8) line +1 (code 11).
  m.put<int64_t>(table + 16, 3);
  m.bytes(table + 32, std::string("\xe9\x00\xdb", 3));
  BufferMemoryReader mem;
  mem.add(m.base, m.b);

  auto threads = python::walk_runtime(mem, rt, l);
  REQUIRE(threads);
  REQUIRE(threads->size() == 1);
  const auto& t = (*threads)[0];
  CHECK(t.error.empty());
  CHECK(t.thread_id == 0x7f0000001000);
  CHECK(t.native_tid == 4242);
  CHECK(t.holds_gil);
  REQUIRE(t.frames.size() == 2);
  CHECK(t.frames[0].function == "T.f\xc3\xbcnf\xe6\x96\x87");
  CHECK(t.frames[0].name == "f\xc3\xbcnf\xe6\x96\x87");
  CHECK(t.frames[0].file == "train.py");
  CHECK(t.frames[0].line == 11);
  CHECK_FALSE(t.frames[0].is_entry);
  CHECK(t.frames[1].function == "<module>");
  CHECK(t.frames[1].line == 30);
  CHECK(t.frames[1].is_entry);

  SECTION("a frame chain that loops ends that thread with an error, not a hang") {
    m.put<uint64_t>(f2 + 48, f1);
    BufferMemoryReader looped;
    looped.add(m.base, m.b);
    auto again = python::walk_runtime(looped, rt, l);
    REQUIRE(again);
    CHECK((*again)[0].error == "frame chain loops");
    CHECK((*again)[0].frames.size() == 2);
  }
  SECTION("an unmapped interpreter pointer is an error value") {
    m.put<uint64_t>(rt + 40, 0xdead0000);
    BufferMemoryReader bad;
    bad.add(m.base, m.b);
    auto r = python::walk_runtime(bad, rt, l);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "cannot read the interpreter's thread list");
  }
}

TEST_CASE("python: a Thread's _name through shared keys and through a materialised dict (3.11)", "[python]") {
  const auto l = *python::static_layout(11);
  Mem m;
  const uint64_t obj = 0x10100, type = 0x10400, keys = 0x10800, values = 0x10c00, s_target = 0x11000,
                 s_name = 0x11100, s_val = 0x11200, dict = 0x11400, keys2 = 0x11800;
  m.put<uint64_t>(obj + 8, type);
  m.put<uint64_t>(type + 168, uint64_t{1} << 4);  // Py_TPFLAGS_MANAGED_DICT
  m.put<uint64_t>(type + 872, keys);              // ht_cached_keys
  m.put<uint64_t>(obj - 32, values);              // values pre-header
  // Split keys: 8 index bytes, then {key, value} entries: _target, _name.
  m.put<uint8_t>(keys + 9, 3);
  m.put<uint8_t>(keys + 10, 2);
  m.put<int64_t>(keys + 24, 2);
  m.put<uint64_t>(keys + 40, s_target);
  m.put<uint64_t>(keys + 56, s_name);
  m.str(s_target, u"_target", true);
  m.str(s_name, u"_name", true);
  m.str(s_val, u"ckpt-writer", true);
  m.put<uint64_t>(values + 8, s_val);  // values[1]
  {
    BufferMemoryReader mem;
    mem.add(m.base, m.b);
    CHECK(python::read_instance_str_attr(mem, obj, "_name", l) == std::optional<std::string>("ckpt-writer"));
    CHECK_FALSE(python::read_instance_str_attr(mem, obj, "_missing", l));
  }
  SECTION("materialised dict: combined unicode keys with the values in the entries") {
    m.put<uint64_t>(obj - 32, 0);
    m.put<uint64_t>(obj - 24, dict);
    m.put<uint64_t>(dict + 32, keys2);
    m.put<uint64_t>(dict + 40, 0);
    m.put<uint8_t>(keys2 + 9, 3);
    m.put<uint8_t>(keys2 + 10, 1);
    m.put<int64_t>(keys2 + 24, 1);
    m.put<uint64_t>(keys2 + 40, s_name);
    m.put<uint64_t>(keys2 + 48, s_val);
    BufferMemoryReader mem;
    mem.add(m.base, m.b);
    CHECK(python::read_instance_str_attr(mem, obj, "_name", l) == std::optional<std::string>("ckpt-writer"));
  }
  SECTION("a type without a managed dict, or a version without the layout, gives nothing") {
    m.put<uint64_t>(type + 168, 0);
    BufferMemoryReader mem;
    mem.add(m.base, m.b);
    CHECK_FALSE(python::read_instance_str_attr(mem, obj, "_name", l));
    m.put<uint64_t>(type + 168, uint64_t{1} << 4);
    BufferMemoryReader mem2;
    mem2.add(m.base, m.b);
    CHECK_FALSE(python::read_instance_str_attr(mem2, obj, "_name", *python::static_layout(12)));
  }
}
