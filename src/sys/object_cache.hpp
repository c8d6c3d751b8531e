// ObjectCache: a per-user, bounded on-disk cache of data derived from an ELF
// object (its sorted symbol index, the file:line answers already looked up),
// keyed by the object's GNU build-id (docs/stacks.md, "Symbol cache").
//
// ccdiag runs as root on production hosts, so the directory is treated as
// somebody else's until shown otherwise:
//   - open(): the directory must be a real directory (O_NOFOLLOW on the last
//     component), owned by the effective user, and not group- or
//     world-writable; it is created 0700 when missing. Everything after goes
//     through that directory fd (openat/renameat/unlinkat), so a rename of the
//     path afterwards changes nothing.
//   - load(): O_NOFOLLOW|O_NONBLOCK, regular file owned by us, size capped
//     (kMaxEntryBytes), header, key, guard and CRC-32 checked; anything off is
//     a miss (the caller rebuilds and overwrites), never trusted. The payload
//     is opaque here: its parser validates every offset again.
//   - store(): written to a fresh O_EXCL temp file in the same directory, then
//     renamed over the entry, so concurrent runs see either the old or the new
//     entry whole; no fsync (a crash may leave a torn entry: its CRC fails).
//   - the total is bounded (kDefaultMaxTotalBytes): after a store, the entries
//     least recently used (mtime, refreshed on every hit) are deleted until the
//     total fits; temp files older than a minute (a killed writer) go too.
// Failure modes are values: open() errors name the reason (the caller runs
// without a cache); load() misses say why (for tests and --verbose).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ccdiag/result.hpp"

namespace ccdiag {

// What the entry was derived from: it must still match, or the entry is stale
// (a debuginfo package installed since, a file rebuilt without a new build-id).
struct CacheGuard {
  uint64_t object_size = 0;
  int64_t object_mtime_ns = 0;
  uint64_t debug_size = 0;       // separate debuginfo file, 0 when none
  int64_t debug_mtime_ns = 0;
};

struct CacheKey {
  std::string kind;      // "sym", "line": [a-z]{1,8}
  std::string build_id;  // lowercase hex, 2..128 chars
  uint32_t kind_version = 1;  // bump when the payload layout of `kind` changes
};

// Where the per-user cache lives: $XDG_CACHE_HOME/ccdiag, else ~/.cache/ccdiag.
// As root, always root's own home from the password database, never a HOME or
// XDG_CACHE_HOME inherited through sudo from another user.
std::string default_object_cache_dir();

class ObjectCache {
 public:
  static constexpr uint64_t kMaxEntryBytes = 64ull << 20;
  static constexpr uint64_t kDefaultMaxTotalBytes = 256ull << 20;

  // Opens (creating it 0700 when missing, with its parent) and checks `dir`.
  static Result<ObjectCache> open(const std::string& dir, uint64_t max_total_bytes = kDefaultMaxTotalBytes);

  ObjectCache(ObjectCache&& o) noexcept : dfd_(o.dfd_), max_total_(o.max_total_), dir_(std::move(o.dir_)) { o.dfd_ = -1; }
  ObjectCache& operator=(ObjectCache&&) = delete;
  ObjectCache(const ObjectCache&) = delete;
  ~ObjectCache();

  // The payload of a valid entry; an Error (a miss) otherwise.
  Result<std::string> load(const CacheKey& key, const CacheGuard& guard) const;
  // Writes the entry atomically, then evicts down to the bound.
  Status store(const CacheKey& key, const CacheGuard& guard, std::string_view payload) const;
  // Deletes least recently used entries until the total is <= the bound.
  void evict() const;

  const std::string& dir() const { return dir_; }
  // The entry's file name inside dir(): "<kind>-<build_id>.v<N>" ("" for an invalid key).
  static std::string entry_name(const CacheKey& key);

 private:
  ObjectCache(int dfd, uint64_t max_total, std::string dir) : dfd_(dfd), max_total_(max_total), dir_(std::move(dir)) {}
  int dfd_ = -1;
  uint64_t max_total_ = 0;
  std::string dir_;
};

}  // namespace ccdiag
