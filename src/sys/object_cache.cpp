#include "sys/object_cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sys/fd_io.hpp"

namespace ccdiag {

namespace {

// Host byte order on purpose: the cache never leaves the host that wrote it.
constexpr char kMagic[8] = {'C', 'C', 'D', 'O', 'B', 'J', 'C', '\x01'};
constexpr uint32_t kFormat = 1;

struct Header {
  char magic[8];
  uint32_t format;
  uint32_t kind_version;
  char kind[8];
  uint32_t build_id_len;
  char build_id[128];
  uint64_t object_size;
  int64_t object_mtime_ns;
  uint64_t debug_size;
  int64_t debug_mtime_ns;
  uint64_t payload_len;
  uint32_t crc;  // CRC-32 of the header (this field 0) and the payload
  uint32_t reserved;
};
static_assert(sizeof(Header) == 208, "on-disk header layout");

bool valid_key(const CacheKey& k) {
  if (k.kind.empty() || k.kind.size() > 8 || k.build_id.size() < 2 || k.build_id.size() > 128) return false;
  for (char c : k.kind)
    if (c < 'a' || c > 'z') return false;
  for (char c : k.build_id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

Header make_header(const CacheKey& key, const CacheGuard& g, uint64_t payload_len) {
  Header h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.format = kFormat;
  h.kind_version = key.kind_version;
  std::memcpy(h.kind, key.kind.data(), key.kind.size());
  h.build_id_len = static_cast<uint32_t>(key.build_id.size());
  std::memcpy(h.build_id, key.build_id.data(), key.build_id.size());
  h.object_size = g.object_size;
  h.object_mtime_ns = g.object_mtime_ns;
  h.debug_size = g.debug_size;
  h.debug_mtime_ns = g.debug_mtime_ns;
  h.payload_len = payload_len;
  return h;
}

uint32_t crc_of(const Header& h, std::string_view payload) {
  Header z = h;
  z.crc = 0;
  uLong c = crc32(0L, Z_NULL, 0);
  c = crc32(c, reinterpret_cast<const Bytef*>(&z), sizeof z);
  // zlib's length is uInt: feed the payload in chunks (entries are < 4 GiB anyway).
  for (size_t off = 0; off < payload.size();) {
    const size_t n = std::min<size_t>(payload.size() - off, 1u << 30);
    c = crc32(c, reinterpret_cast<const Bytef*>(payload.data() + off), static_cast<uInt>(n));
    off += n;
  }
  return static_cast<uint32_t>(c);
}

int64_t mtime_ns(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

bool is_entry_name(const char* n) {
  // "<kind>-<hex>.v<N>" as written by store(); anything else is not ours.
  const char* dash = std::strchr(n, '-');
  return n[0] != '.' && dash && std::strstr(dash, ".v") != nullptr;
}

bool is_temp_name(const char* n) { return std::strncmp(n, ".tmp-", 5) == 0; }

Error miss(std::string why) { return make_error(std::move(why), "symbol cache"); }

}  // namespace

std::string default_object_cache_dir() {
  if (::geteuid() == 0) {
    // Root's own cache: sudo -E (or a login shell that kept HOME) must not
    // make root read or write entries in a directory another user controls.
    const passwd* pw = ::getpwuid(0);
    const std::string home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : "/root";
    return home + "/.cache/ccdiag";
  }
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && x[0] == '/') return std::string(x) + "/ccdiag";
  if (const char* h = std::getenv("HOME"); h && h[0] == '/') return std::string(h) + "/.cache/ccdiag";
  if (const passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_dir && pw->pw_dir[0] == '/')
    return std::string(pw->pw_dir) + "/.cache/ccdiag";
  return "";
}

std::string ObjectCache::entry_name(const CacheKey& key) {
  if (!valid_key(key)) return "";
  return key.kind + "-" + key.build_id + ".v" + std::to_string(key.kind_version);
}

Result<ObjectCache> ObjectCache::open(const std::string& dir, uint64_t max_total_bytes) {
  if (dir.empty() || dir[0] != '/') return make_error("not an absolute path", dir.empty() ? "symbol cache" : dir);
  // Create the cache dir (and its parent, e.g. ~/.cache) private when missing.
  std::string trimmed = dir;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  if (const size_t slash = trimmed.rfind('/'); slash != std::string::npos && slash > 0)
    ::mkdir(trimmed.substr(0, slash).c_str(), 0700);
  if (::mkdir(trimmed.c_str(), 0700) != 0 && errno != EEXIST)
    return make_error(std::string("cannot create: ") + std::strerror(errno), dir);
  const int dfd = ::open(trimmed.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0) {
    const int err = errno;
    return make_error(err == ELOOP || err == ENOTDIR ? "is a symlink or not a directory: refused"
                                                     : std::string("cannot open: ") + std::strerror(err),
                      dir);
  }
  struct stat st{};
  if (::fstat(dfd, &st) != 0 || !S_ISDIR(st.st_mode)) {
    ::close(dfd);
    return make_error("not a directory: refused", dir);
  }
  if (st.st_uid != ::geteuid()) {
    ::close(dfd);
    return make_error("owned by uid " + std::to_string(st.st_uid) + ", not by the running user (uid " +
                          std::to_string(::geteuid()) + "): refused",
                      dir, "use a directory of your own (--symbol-cache DIR) or --no-symbol-cache");
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    ::close(dfd);
    return make_error("group- or world-writable: refused", dir, "chmod 700 it, or use --no-symbol-cache");
  }
  return ObjectCache(dfd, max_total_bytes, trimmed);
}

ObjectCache::~ObjectCache() {
  if (dfd_ >= 0) ::close(dfd_);
}

Result<std::string> ObjectCache::load(const CacheKey& key, const CacheGuard& guard) const {
  const std::string name = entry_name(key);
  if (name.empty()) return miss("invalid key");
  const int fd = ::openat(dfd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return miss(errno == ELOOP ? "entry is a symlink: ignored" : "no entry");
  struct stat st{};
  std::string bytes;
  auto fail = [&](std::string why) -> Result<std::string> {
    ::close(fd);
    return miss(std::move(why));
  };
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return fail("entry is not a regular file");
  if (st.st_uid != ::geteuid()) return fail("entry owned by another user");
  if (static_cast<uint64_t>(st.st_size) < sizeof(Header)) return fail("entry truncated");
  if (static_cast<uint64_t>(st.st_size) > kMaxEntryBytes) return fail("entry larger than the cap");
  bytes.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::pread(fd, bytes.data() + got, bytes.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got != bytes.size()) return fail("entry shorter than its size");
  Header h;
  std::memcpy(&h, bytes.data(), sizeof h);
  const Header want = make_header(key, guard, bytes.size() - sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.format != kFormat) return fail("not a cache entry of this format");
  if (h.kind_version != want.kind_version || std::memcmp(h.kind, want.kind, sizeof h.kind) != 0)
    return fail("entry of another version");
  if (h.build_id_len != want.build_id_len || std::memcmp(h.build_id, want.build_id, sizeof h.build_id) != 0)
    return fail("entry of another build-id");
  if (h.object_size != want.object_size || h.object_mtime_ns != want.object_mtime_ns ||
      h.debug_size != want.debug_size || h.debug_mtime_ns != want.debug_mtime_ns)
    return fail("entry stale (object or debuginfo changed)");
  if (h.payload_len != want.payload_len) return fail("entry length mismatch");
  const std::string_view payload(bytes.data() + sizeof h, bytes.size() - sizeof h);
  if (crc_of(h, payload) != h.crc) return fail("entry checksum mismatch");
  // Most recently used = newest mtime: what eviction keeps.
  ::futimens(fd, nullptr);
  ::close(fd);
  bytes.erase(0, sizeof h);
  return bytes;
}

Status ObjectCache::store(const CacheKey& key, const CacheGuard& guard, std::string_view payload) const {
  const std::string name = entry_name(key);
  if (name.empty()) return make_error("invalid key", "symbol cache");
  if (payload.size() + sizeof(Header) > kMaxEntryBytes) return make_error("entry larger than the cap", name);
  Header h = make_header(key, guard, payload.size());
  h.crc = crc_of(h, payload);
  static std::atomic<unsigned> counter{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
    const auto ns = std::chrono::steady_clock::now().time_since_epoch().count();
    tmp = ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + std::to_string(ns & 0xffffff);
    fd = ::openat(dfd_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return make_error(std::string("cannot create a temp file: ") + std::strerror(errno), dir_);
  const bool ok = write_all(fd, std::string_view(reinterpret_cast<const char*>(&h), sizeof h)) && write_all(fd, payload);
  const int werr = errno;
  if (::close(fd) != 0 || !ok) {
    ::unlinkat(dfd_, tmp.c_str(), 0);
    return make_error(std::string("cannot write: ") + std::strerror(ok ? errno : werr), dir_);
  }
  // rename(2) is atomic: a concurrent reader opens the old entry or the new one.
  if (::renameat(dfd_, tmp.c_str(), dfd_, name.c_str()) != 0) {
    const int err = errno;
    ::unlinkat(dfd_, tmp.c_str(), 0);
    return make_error(std::string("cannot rename into place: ") + std::strerror(err), dir_);
  }
  evict();
  return Ok{};
}

void ObjectCache::evict() const {
  const int lfd = ::openat(dfd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lfd < 0) return;
  DIR* d = ::fdopendir(lfd);
  if (!d) {
    ::close(lfd);
    return;
  }
  struct Item {
    std::string name;
    uint64_t size;
    int64_t mtime;
  };
  std::vector<Item> items;
  uint64_t total = 0;
  const int64_t now_ns = static_cast<int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                  std::chrono::system_clock::now().time_since_epoch())
                                                  .count());
  while (dirent* e = ::readdir(d)) {
    const bool temp = is_temp_name(e->d_name);
    if (!temp && !is_entry_name(e->d_name)) continue;
    struct stat st{};
    // Never follows a symlink; only our own regular files are counted or removed.
    if (::fstatat(dfd_, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != ::geteuid())
      continue;
    if (temp) {
      // A writer killed between create and rename leaves its temp file behind.
      if (now_ns - mtime_ns(st) > 60'000'000'000LL) ::unlinkat(dfd_, e->d_name, 0);
      continue;
    }
    items.push_back(Item{e->d_name, static_cast<uint64_t>(st.st_size), mtime_ns(st)});
    total += static_cast<uint64_t>(st.st_size);
  }
  ::closedir(d);
  if (total <= max_total_) return;
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.mtime < b.mtime; });
  for (const auto& it : items) {
    if (total <= max_total_) break;
    if (::unlinkat(dfd_, it.name.c_str(), 0) == 0) total -= it.size;
  }
}

}  // namespace ccdiag
