// PageCachedMemoryReader: the same bytes as the reader behind it, with one
// inner read per page however many small reads land on it.
#include <catch2/catch.hpp>

#include <numeric>

#include "sys/memory_reader.hpp"

using namespace ccdiag;

namespace {
struct CountingReader final : MemoryReader {
  const MemoryReader& inner;
  mutable size_t calls = 0;
  explicit CountingReader(const MemoryReader& m) : inner(m) {}
  size_t read(uint64_t addr, void* out, size_t len) const override {
    ++calls;
    return inner.read(addr, out, len);
  }
};

std::vector<uint8_t> bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  std::iota(v.begin(), v.end(), seed);
  return v;
}
}  // namespace

TEST_CASE("page cache: same bytes as the inner reader, one inner read per page", "[sys][page-cache]") {
  // Two whole pages, a hole, then a region that starts and ends inside pages.
  BufferMemoryReader buf;
  buf.add(0x10000, bytes(2 * 4096, 1));
  buf.add(0x20010, bytes(100, 7));
  CountingReader counted(buf);
  const PageCachedMemoryReader cache(counted);

  for (uint64_t a = 0x10000; a < 0x10000 + 2 * 4096; a += 8) {
    uint64_t x = 0, y = 0;
    REQUIRE(cache.read(a, &x, 8) == 8);
    REQUIRE(buf.read(a, &y, 8) == 8);
    REQUIRE(x == y);
  }
  CHECK(counted.calls == 2);  // 1,024 reads, two pages

  // Across the page boundary, and past the end of the readable range.
  uint8_t out[64] = {};
  uint8_t want[64] = {};
  CHECK(cache.read(0x10000 + 4096 - 10, out, 20) == 20);
  buf.read(0x10000 + 4096 - 10, want, 20);
  CHECK(std::equal(out, out + 20, want));
  CHECK(cache.read(0x10000 + 2 * 4096 - 8, out, 64) == 8);
  CHECK(cache.read(0x18000, out, 8) == 0);  // the hole

  // A region inside a page: the inner reader's answers, not the page's.
  for (uint64_t a : {0x20010ull, 0x20050ull, 0x2006cull, 0x20070ull, 0x2000cull}) {
    uint8_t got[8] = {}, exp[8] = {};
    const size_t n = cache.read(a, got, 8);
    CHECK(n == buf.read(a, exp, 8));
    CHECK(std::equal(got, got + n, exp));
  }
  // A large read goes straight through.
  std::vector<uint8_t> big(3 * 4096);
  const size_t before = counted.calls;
  CHECK(cache.read(0x10000, big.data(), big.size()) == 2 * 4096);
  CHECK(counted.calls == before + 1);
}
