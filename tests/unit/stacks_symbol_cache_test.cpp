// The per-user object cache behind `ccdiag stacks` (sys/object_cache.hpp):
// entries round-trip; anything corrupt, truncated, oversized, stale, of another
// build-id or version, or planted as a symlink is a miss and gets rebuilt;
// concurrent writers leave one valid entry; an unsafe directory is refused;
// eviction keeps the total under the bound.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sys/object_cache.hpp"

using namespace ccdiag;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/ccdiag-cache-test-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    path = tmpl;
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void spit(const std::string& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << bytes;
}

const CacheKey kKey{"sym", "93ac61ec5a8eb1396f9fbd350e3169a558528a40", 1};
const CacheGuard kGuard{2216304, 1700000000123456789, 5000000, 1700000000987654321};

std::string payload_of(size_t n, char seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + i * 7);
  return s;
}

}  // namespace

TEST_CASE("object cache: an entry round-trips and is a miss for another key, version or guard", "[stacks][cache]") {
  TempDir t;
  auto c = ObjectCache::open(t.path + "/c");
  REQUIRE(c);
  struct stat st{};
  REQUIRE(::stat((t.path + "/c").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);  // created private
  const std::string payload = payload_of(100000, 3);
  REQUIRE(c->store(kKey, kGuard, payload));
  auto got = c->load(kKey, kGuard);
  REQUIRE(got);
  CHECK(*got == payload);

  CacheKey other = kKey;
  other.build_id[0] = 'a';
  CHECK_FALSE(c->load(other, kGuard));
  CacheKey newer = kKey;
  newer.kind_version = 2;
  CHECK_FALSE(c->load(newer, kGuard));
  CacheGuard changed = kGuard;
  changed.debug_size = 0;  // debuginfo removed since
  auto stale = c->load(kKey, changed);
  REQUIRE_FALSE(stale);
  CHECK(stale.error().message.find("stale") != std::string::npos);
}

TEST_CASE("object cache: an entry copied under another build-id or version is refused by its header", "[stacks][cache]") {
  TempDir t;
  auto c = ObjectCache::open(t.path);
  REQUIRE(c);
  REQUIRE(c->store(kKey, kGuard, "payload"));
  const std::string bytes = slurp(t.path + "/" + ObjectCache::entry_name(kKey));
  CacheKey other = kKey;
  other.build_id = "00112233445566778899aabbccddeeff00112233";
  spit(t.path + "/" + ObjectCache::entry_name(other), bytes);
  auto r = c->load(other, kGuard);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("another build-id") != std::string::npos);
  CacheKey v2 = kKey;
  v2.kind_version = 2;
  spit(t.path + "/" + ObjectCache::entry_name(v2), bytes);
  auto r2 = c->load(v2, kGuard);
  REQUIRE_FALSE(r2);
  CHECK(r2.error().message.find("another version") != std::string::npos);
}

TEST_CASE("object cache: corrupt, truncated and oversized entries are misses, then rebuilt", "[stacks][cache]") {
  TempDir t;
  auto c = ObjectCache::open(t.path);
  REQUIRE(c);
  const std::string entry = t.path + "/" + ObjectCache::entry_name(kKey);
  const std::string payload = payload_of(4096, 9);
  REQUIRE(c->store(kKey, kGuard, payload));
  const std::string good = slurp(entry);

  SECTION("one flipped payload bit") {
    std::string bad = good;
    bad[bad.size() - 100] ^= 0x10;
    spit(entry, bad);
    auto r = c->load(kKey, kGuard);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("checksum") != std::string::npos);
  }
  SECTION("a torn write: cut inside the payload") {
    spit(entry, good.substr(0, good.size() - 1));
    CHECK_FALSE(c->load(kKey, kGuard));
  }
  SECTION("cut inside the header") {
    spit(entry, good.substr(0, 20));
    CHECK_FALSE(c->load(kKey, kGuard));
  }
  SECTION("a length field that claims more than the file") {
    std::string bad = good;
    bad[192] = '\x7f';  // payload_len (offset 192 in the 208-byte header)
    spit(entry, bad);
    CHECK_FALSE(c->load(kKey, kGuard));
  }
  SECTION("an entry larger than the cap is not read") {
    REQUIRE(::truncate(entry.c_str(), static_cast<off_t>(ObjectCache::kMaxEntryBytes + 1)) == 0);
    auto r = c->load(kKey, kGuard);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("cap") != std::string::npos);
  }
  // Whatever was wrong, a store rebuilds a valid entry in its place.
  REQUIRE(c->store(kKey, kGuard, payload));
  auto again = c->load(kKey, kGuard);
  REQUIRE(again);
  CHECK(*again == payload);
}

TEST_CASE("object cache: a payload over the cap is not stored", "[stacks][cache]") {
  TempDir t;
  auto c = ObjectCache::open(t.path);
  REQUIRE(c);
  CHECK_FALSE(c->store(kKey, kGuard, std::string(ObjectCache::kMaxEntryBytes, 'x')));
  CHECK_FALSE(c->load(kKey, kGuard));
}

TEST_CASE("object cache: concurrent writers of one key leave one whole, valid entry", "[stacks][cache]") {
  TempDir t;
  constexpr int kWriters = 6;
  std::vector<pid_t> kids;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t p = ::fork();
    REQUIRE(p >= 0);
    if (p == 0) {
      auto c = ObjectCache::open(t.path);
      if (!c) ::_exit(1);
      // 1 MiB each, different bytes per writer: a mixed or torn entry would fail its CRC.
      const std::string payload = payload_of(1 << 20, static_cast<char>(w));
      for (int i = 0; i < 15; ++i)
        if (!c->store(kKey, kGuard, payload)) ::_exit(2);
      ::_exit(0);
    }
    kids.push_back(p);
  }
  // Read while they write: every successful read is one writer's whole payload.
  auto reader = ObjectCache::open(t.path);
  REQUIRE(reader);
  int reads = 0;
  for (int i = 0; i < 200; ++i)
    if (auto r = reader->load(kKey, kGuard)) {
      ++reads;
      bool matches_a_writer = false;
      for (int w = 0; w < kWriters && !matches_a_writer; ++w) matches_a_writer = *r == payload_of(1 << 20, static_cast<char>(w));
      REQUIRE(matches_a_writer);
    }
  for (pid_t p : kids) {
    int st = 0;
    REQUIRE(::waitpid(p, &st, 0) == p);
    CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0));
  }
  auto final_entry = reader->load(kKey, kGuard);
  REQUIRE(final_entry);
  CHECK(final_entry->size() == (1u << 20));
  // No temp files left behind by writers that finished.
  int temps = 0;
  if (DIR* d = ::opendir(t.path.c_str())) {
    while (dirent* e = ::readdir(d)) temps += std::string(e->d_name).rfind(".tmp-", 0) == 0;
    ::closedir(d);
  }
  CHECK(temps == 0);
  INFO("reads that found an entry while writers ran: " << reads);
}

TEST_CASE("object cache: an unsafe directory is refused", "[stacks][cache]") {
  TempDir t;
  const std::string d = t.path + "/d";
  REQUIRE(::mkdir(d.c_str(), 0700) == 0);
  SECTION("world-writable") {
    REQUIRE(::chmod(d.c_str(), 0777) == 0);
    auto r = ObjectCache::open(d);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("writable") != std::string::npos);
  }
  SECTION("group-writable") {
    REQUIRE(::chmod(d.c_str(), 0770) == 0);
    CHECK_FALSE(ObjectCache::open(d));
  }
  SECTION("a symlink to a good directory") {
    const std::string link = t.path + "/link";
    REQUIRE(::symlink(d.c_str(), link.c_str()) == 0);
    auto r = ObjectCache::open(link);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("symlink") != std::string::npos);
  }
  SECTION("owned by another user") {
    if (::geteuid() != 0) {
      // Not root: "/" belongs to root, not to us.
      CHECK_FALSE(ObjectCache::open("/"));
    } else {
      REQUIRE(::chown(d.c_str(), 65534, 65534) == 0);
      auto r = ObjectCache::open(d);
      REQUIRE_FALSE(r);
      CHECK(r.error().message.find("owned by uid 65534") != std::string::npos);
    }
  }
  SECTION("a relative path") { CHECK_FALSE(ObjectCache::open("relative/dir")); }
}

TEST_CASE("object cache: a symlink planted as an entry is never followed", "[stacks][cache]") {
  TempDir t;
  auto c = ObjectCache::open(t.path + "/c");
  REQUIRE(c);
  // A valid entry elsewhere, linked in under the entry's name.
  auto other = ObjectCache::open(t.path + "/other");
  REQUIRE(other);
  REQUIRE(other->store(kKey, kGuard, "planted"));
  const std::string target = t.path + "/other/" + ObjectCache::entry_name(kKey);
  const std::string link = t.path + "/c/" + ObjectCache::entry_name(kKey);
  REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
  auto r = c->load(kKey, kGuard);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("symlink") != std::string::npos);
  // A store replaces the link itself; the link's target is not written through.
  const std::string before = slurp(target);
  REQUIRE(c->store(kKey, kGuard, "mine"));
  CHECK(slurp(target) == before);
  struct stat st{};
  REQUIRE(::lstat(link.c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  auto mine = c->load(kKey, kGuard);
  REQUIRE(mine);
  CHECK(*mine == "mine");
}

TEST_CASE("object cache: eviction keeps the total under the bound, least recently used first", "[stacks][cache]") {
  TempDir t;
  const uint64_t entry_bytes = 10000 + 208;
  auto c = ObjectCache::open(t.path, 3 * entry_bytes + 100);
  REQUIRE(c);
  auto key = [](int i) {
    CacheKey k = kKey;
    k.build_id = std::string(38, '0') + std::to_string(10 + i);
    return k;
  };
  for (int i = 0; i < 3; ++i) {
    REQUIRE(c->store(key(i), kGuard, payload_of(10000, static_cast<char>(i))));
    // Distinct, increasing mtimes without sleeping.
    const std::string p = t.path + "/" + ObjectCache::entry_name(key(i));
    timespec ts[2] = {{1000 + i, 0}, {1000 + i, 0}};
    REQUIRE(::utimensat(AT_FDCWD, p.c_str(), ts, 0) == 0);
  }
  // A hit refreshes entry 0: it is now the most recently used.
  REQUIRE(c->load(key(0), kGuard));
  // Two more entries push the total over the bound twice.
  for (int i = 3; i < 5; ++i) REQUIRE(c->store(key(i), kGuard, payload_of(10000, static_cast<char>(i))));
  CHECK(c->load(key(0), kGuard));        // used recently: kept
  CHECK_FALSE(c->load(key(1), kGuard));  // oldest: evicted
  CHECK_FALSE(c->load(key(2), kGuard));
  CHECK(c->load(key(3), kGuard));
  CHECK(c->load(key(4), kGuard));
  uint64_t total = 0;
  for (int i = 0; i < 5; ++i) {
    struct stat st{};
    if (::stat((t.path + "/" + ObjectCache::entry_name(key(i))).c_str(), &st) == 0) total += st.st_size;
  }
  CHECK(total <= 3 * entry_bytes + 100);
}

TEST_CASE("object cache: a killed writer's old temp file is removed, a fresh one is left alone", "[stacks][cache]") {
  TempDir t;
  auto c = ObjectCache::open(t.path);
  REQUIRE(c);
  const std::string old_tmp = t.path + "/.tmp-1-0-1", new_tmp = t.path + "/.tmp-2-0-2";
  spit(old_tmp, "partial");
  spit(new_tmp, "partial");
  timespec ts[2] = {{1000, 0}, {1000, 0}};
  REQUIRE(::utimensat(AT_FDCWD, old_tmp.c_str(), ts, 0) == 0);
  c->evict();
  CHECK(::access(old_tmp.c_str(), F_OK) != 0);
  CHECK(::access(new_tmp.c_str(), F_OK) == 0);  // may be a concurrent writer's
}

TEST_CASE("object cache: keys that could escape the directory are invalid", "[stacks][cache]") {
  CHECK(ObjectCache::entry_name(CacheKey{"sym", "../../etc", 1}).empty());
  CHECK(ObjectCache::entry_name(CacheKey{"Sym", "abcd", 1}).empty());
  CHECK(ObjectCache::entry_name(CacheKey{"sym", "ABCD", 1}).empty());
  CHECK(ObjectCache::entry_name(CacheKey{"sym", "abcd", 3}) == "sym-abcd.v3");
}

TEST_CASE("object cache: root's default directory ignores an inherited HOME and XDG_CACHE_HOME", "[stacks][cache]") {
  const char* home = std::getenv("HOME");
  const std::string saved_home = home ? home : "";
  ::setenv("HOME", "/home/someone", 1);
  ::setenv("XDG_CACHE_HOME", "/home/someone/.cache", 1);
  const std::string d = default_object_cache_dir();
  ::unsetenv("XDG_CACHE_HOME");
  if (home) ::setenv("HOME", saved_home.c_str(), 1);
  if (::geteuid() == 0) {
    CHECK(d.find("/home/someone") == std::string::npos);
    CHECK(d.size() > std::string("/.cache/ccdiag").size());
    CHECK(d.substr(d.size() - 14) == "/.cache/ccdiag");
  } else {
    CHECK(d == "/home/someone/.cache/ccdiag");
  }
}
