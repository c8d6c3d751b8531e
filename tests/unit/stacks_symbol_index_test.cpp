// SymbolIndex and LineMemo (collectors/stacks/): the cached symbol index
// names every address as libdwfl's dwfl_module_addrinfo does (so a cached
// name never differs from an uncached one), survives serialisation, and its
// parsers refuse every malformed payload; ObjectSymbols builds, stores and
// reloads both through the cache.
#include <catch2/catch.hpp>

#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>

#include "collectors/stacks/line_memo.hpp"
#include "collectors/stacks/object_symbols.hpp"
#include "collectors/stacks/symbol_index.hpp"
#include "sys/elf_view.hpp"
#include "sys/object_cache.hpp"

using namespace ccdiag;

namespace {

char* g_debuginfo_path = nullptr;
const Dwfl_Callbacks kOffline = {dwfl_build_id_find_elf, dwfl_build_id_find_debuginfo, dwfl_offline_section_address,
                                 &g_debuginfo_path};

std::string self_exe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  REQUIRE(n > 0);
  return std::string(buf, static_cast<size_t>(n));
}

// The libc this test runs with (a real, big, stripped object with separate debuginfo when installed).
std::string libc_path() {
  for (const char* p : {"/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6"})
    if (::access(p, R_OK) == 0) return p;
  return "";
}

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/ccdiag-symidx-test-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    path = tmpl;
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

// Compares our answer with libdwfl's for addresses spread over the object's
// executable sections; returns how many addresses were compared.
size_t compare_with_libdwfl(const std::string& path) {
  Dwfl* dwfl = dwfl_begin(&kOffline);
  REQUIRE(dwfl);
  dwfl_report_begin(dwfl);
  Dwfl_Module* mod = dwfl_report_offline(dwfl, "obj", path.c_str(), -1);
  dwfl_report_end(dwfl, nullptr, nullptr);
  REQUIRE(mod);
  Dwarf_Addr bias = 0;
  REQUIRE(dwfl_module_getelf(mod, &bias));
  // The same table choice ObjectSymbols makes, through its cache-less path.
  ObjectSymbols ours(::getpid(), path, nullptr, nullptr);
  REQUIRE_FALSE(ours.unsupported());
  auto mapped = MappedFile::open(path);
  REQUIRE(mapped);
  auto elf = ElfView::parse(mapped->bytes());
  REQUIRE(elf);
  size_t compared = 0, named = 0, differ = 0;
  for (const auto& s : elf->sections()) {
    if (s.type != SHT_PROGBITS || s.addr == 0 || s.name.rfind(".text", 0) != 0) continue;
    // ~8k addresses per section at an odd stride, plus every byte of a few
    // windows: inside functions, on their first bytes, in the padding between
    // them and past the last one. libdwfl scans its whole table per lookup,
    // which bounds how many we can afford.
    const uint64_t stride = std::max<uint64_t>(1, s.size / 8000) | 1;
    std::vector<uint64_t> addrs;
    for (uint64_t a = s.addr; a < s.addr + s.size + 64; a += stride) addrs.push_back(a);
    for (uint64_t w : {s.addr, s.addr + s.size / 3, s.addr + s.size - 256})
      for (uint64_t a = w; a < w + 512; ++a) addrs.push_back(a);
    for (uint64_t a : addrs) {
      GElf_Off off = 0;
      GElf_Sym sym{};
      const char* theirs = dwfl_module_addrinfo(mod, a + bias, &off, &sym, nullptr, nullptr, nullptr);
      const std::string want = theirs ? theirs : "";
      const std::string got = ours.function(a).value_or("");
      ++compared;
      named += theirs != nullptr;
      if (want != got && ++differ <= 10) {
        INFO(path << " address 0x" << std::hex << a);
        CHECK(got == want);
      }
    }
  }
  CHECK(differ == 0);
  dwfl_end(dwfl);
  CHECK(named > compared / 2);
  return compared;
}

}  // namespace

TEST_CASE("symbol index: names every text address of libc as libdwfl does", "[stacks][symbols]") {
  const std::string libc = libc_path();
  if (libc.empty()) {
    WARN("SKIPPED: no libc.so.6 at a known path");
    return;
  }
  CHECK(compare_with_libdwfl(libc) > 8000);
}

TEST_CASE("symbol index: names every text address of an unstripped binary as libdwfl does", "[stacks][symbols]") {
  CHECK(compare_with_libdwfl(self_exe()) > 8000);
}

TEST_CASE("symbol index: survives serialisation with identical answers", "[stacks][symbols]") {
  auto mapped = MappedFile::open(self_exe());
  REQUIRE(mapped);
  auto elf = ElfView::parse(mapped->bytes());
  REQUIRE(elf);
  auto built = SymbolIndex::build(*elf, *elf, true, SymbolIndex::Source::object_symtab);
  REQUIRE(built);
  REQUIRE(built->size() > 1000);
  auto parsed = SymbolIndex::parse(built->serialize());
  REQUIRE(parsed);
  CHECK(parsed->size() == built->size());
  const auto text = elf->section(".text");
  REQUIRE(text);
  for (uint64_t a = text->addr; a < text->addr + text->size; a += 97) {
    const auto x = built->lookup(a), y = parsed->lookup(a);
    REQUIRE(x.has_value() == y.has_value());
    if (x) CHECK(built->name_in(mapped->bytes(), *x) == parsed->name_in(mapped->bytes(), *y));
  }
}

TEST_CASE("symbol index: malformed payloads are refused, never trusted", "[stacks][symbols]") {
  auto mapped = MappedFile::open(self_exe());
  REQUIRE(mapped);
  auto elf = ElfView::parse(mapped->bytes());
  REQUIRE(elf);
  const std::string good = SymbolIndex::build(*elf, *elf, true, SymbolIndex::Source::object_symtab)->serialize();
  REQUIRE(SymbolIndex::parse(good));
  CHECK_FALSE(SymbolIndex::parse(""));
  CHECK_FALSE(SymbolIndex::parse(good.substr(0, 47)));
  CHECK_FALSE(SymbolIndex::parse(good.substr(0, good.size() - 1)));  // counts say more
  CHECK_FALSE(SymbolIndex::parse(good + "x"));
  std::string bad_magic = good;
  bad_magic[0] ^= 1;
  CHECK_FALSE(SymbolIndex::parse(bad_magic));
  // First entry (at offset 48): a name offset past the string table.
  std::string bad_name = good;
  const uint32_t huge = 0xfffffff0;
  std::memcpy(&bad_name[48 + 16], &huge, 4);
  CHECK_FALSE(SymbolIndex::parse(bad_name));
  // Swap the first two entries' starts: no longer sorted.
  std::string unsorted = good;
  uint64_t a = 0, b = 0;
  std::memcpy(&a, &unsorted[48], 8);
  std::memcpy(&b, &unsorted[48 + 32], 8);
  if (a != b) {
    std::memcpy(&unsorted[48], &b, 8);
    std::memcpy(&unsorted[48 + 32], &a, 8);
    CHECK_FALSE(SymbolIndex::parse(unsorted));
  }
  // A name offset that fits the recorded table but not the file read later.
  auto idx = SymbolIndex::parse(good);
  REQUIRE(idx);
  auto hit = idx->lookup(elf->section(".text")->addr + 64);
  REQUIRE(hit);
  CHECK(idx->name_in(std::string_view(mapped->bytes()).substr(0, 100), *hit).empty());
}

TEST_CASE("line memo: round trip with negative answers; malformed payloads refused", "[stacks][symbols]") {
  LineMemo m;
  REQUIRE(m.put(0x1234, FileLine{"/src/a.c", 42}));
  REQUIRE(m.put(0x1000, std::nullopt));
  REQUIRE(m.put(0x2000, FileLine{"/src/a.c", 7}));
  REQUIRE(m.put(0x3000, FileLine{"b.cpp", 1}));
  auto p = LineMemo::parse(m.serialize());
  REQUIRE(p);
  CHECK(p->size() == 4);
  CHECK(p->find(0x1234) == std::optional<std::optional<FileLine>>(FileLine{"/src/a.c", 42}));
  REQUIRE(p->find(0x1000));
  CHECK_FALSE(p->find(0x1000)->has_value());  // known: no line info
  CHECK_FALSE(p->find(0x1001));               // never looked up
  CHECK(p->find(0x3000)->value().file == "b.cpp");
  CHECK_FALSE(p->changed());

  const std::string good = m.serialize();
  CHECK_FALSE(LineMemo::parse(good.substr(0, good.size() - 1)));
  CHECK_FALSE(LineMemo::parse(good.substr(0, 8)));
  std::string unterminated = good;
  unterminated.back() = 'x';  // last file name loses its NUL
  CHECK_FALSE(LineMemo::parse(unterminated));
  std::string bad_off = good;
  const uint32_t off = 0xffff;
  std::memcpy(&bad_off[16 + 8], &off, 4);  // first row's file offset
  CHECK_FALSE(LineMemo::parse(bad_off));
}

TEST_CASE("line memo: bounded", "[stacks][symbols]") {
  LineMemo m;
  for (size_t i = 0; i < LineMemo::kMaxPcs; ++i) REQUIRE(m.put(i, std::nullopt));
  CHECK_FALSE(m.put(LineMemo::kMaxPcs, std::nullopt));
  CHECK(m.put(5, FileLine{"x", 1}));  // an existing PC may still be updated
}

TEST_CASE("object symbols: cold builds and stores, warm loads; a corrupt entry is rebuilt", "[stacks][symbols]") {
  const std::string libc = libc_path();
  if (libc.empty()) {
    WARN("SKIPPED: no libc.so.6 at a known path");
    return;
  }
  TempDir t;
  auto cache = ObjectCache::open(t.path);
  REQUIRE(cache);
  auto mapped = MappedFile::open(libc);
  REQUIRE(mapped);
  const uint64_t probe = ElfView::parse(mapped->bytes())->section(".text")->addr + 4096;

  SymbolCacheStats cold;
  std::optional<std::string> cold_name;
  {
    ObjectSymbols o(::getpid(), libc, &*cache, &cold);
    cold_name = o.function(probe);
    int dwarf_calls = 0;
    auto fl = o.line(probe, [&] {
      ++dwarf_calls;
      return std::optional<FileLine>(FileLine{"x.c", 3});
    });
    CHECK(dwarf_calls == 1);
    o.flush();
  }
  REQUIRE(cold_name);
  CHECK(cold.index_built == 1);
  CHECK(cold.index_hits == 0);
  CHECK(cold.stored == 2);  // the index and the memo

  SymbolCacheStats warm;
  {
    ObjectSymbols o(::getpid(), libc, &*cache, &warm);
    CHECK(o.function(probe) == cold_name);
    auto fl = o.line(probe, [&]() -> std::optional<FileLine> {
      FAIL("a memoised PC must not reach DWARF");
      return std::nullopt;
    });
    REQUIRE(fl);
    CHECK(fl->file == "x.c");
  }
  CHECK(warm.index_hits == 1);
  CHECK(warm.index_built == 0);
  CHECK(warm.line_hits == 1);

  // Overwrite every entry's tail: checksums fail, everything is rebuilt.
  std::system(("for f in '" + t.path + "'/*.v*; do printf garbage | dd of=\"$f\" bs=1 seek=300 conv=notrunc 2>/dev/null; done").c_str());
  SymbolCacheStats rebuilt;
  {
    ObjectSymbols o(::getpid(), libc, &*cache, &rebuilt);
    CHECK(o.function(probe) == cold_name);
  }
  CHECK(rebuilt.index_hits == 0);
  CHECK(rebuilt.index_built == 1);
}
