// ObjectSymbols: function names and file:line for the PCs of one mapped ELF
// object of a target process, from its SymbolIndex and LineMemo, loaded from
// the per-user cache (sys/object_cache.hpp) by build-id or built on first use
// and stored (docs/stacks.md, "Symbol cache").
//
// The object is opened as the target sees it (/proc/PID/root, openat2
// RESOLVE_IN_ROOT, regular files only) and mapped read-only; names are read
// from the mapped string table only for the frames shown. Separate debuginfo
// comes from the host's /usr/lib/debug/.build-id/xx/yyyy.debug (as libdwfl's
// build-id lookup), used only when its own build-id matches. No build-id: no
// caching (the index is built in memory each run).
//
// unsupported(): objects the index cannot answer like libdwfl would (a
// MiniDebugInfo .gnu_debugdata table, no section headers, not a file): the
// caller asks libdwfl instead.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "collectors/stacks/line_memo.hpp"
#include "collectors/stacks/symbol_index.hpp"
#include "sys/object_cache.hpp"

namespace ccdiag {

// Opens `path` inside /proc/PID/root without leaving it (openat2
// RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS); regular files only; -1 otherwise
// (errno ENOSYS/EPERM: openat2 unavailable).
int open_in_target_root(pid_t pid, const char* path);

struct SymbolCacheStats {
  int index_hits = 0, index_built = 0, line_hits = 0, line_lookups = 0, stored = 0;
};

class ObjectSymbols {
 public:
  // `cache` may be null (disabled). Never fails: an object that cannot be
  // opened is unsupported().
  ObjectSymbols(pid_t pid, const std::string& path, const ObjectCache* cache, SymbolCacheStats* stats);
  ~ObjectSymbols();
  ObjectSymbols(const ObjectSymbols&) = delete;
  ObjectSymbols& operator=(const ObjectSymbols&) = delete;

  bool unsupported() const { return !index_; }
  // Raw (mangled) name of the function at object-relative address `rel`.
  std::optional<std::string> function(uint64_t rel) const;
  // file:line at `rel` from the memo, else from `dwarf` (called once per new PC).
  std::optional<FileLine> line(uint64_t rel, const std::function<std::optional<FileLine>()>& dwarf);
  // Writes a memo that gained PCs back to the cache.
  void flush();

 private:
  struct Mapping;
  std::unique_ptr<Mapping> object_, debug_;
  std::optional<SymbolIndex> index_;
  std::optional<LineMemo> memo_;
  std::string build_id_;
  CacheGuard guard_;
  const ObjectCache* cache_;
  SymbolCacheStats* stats_;
};

}  // namespace ccdiag
