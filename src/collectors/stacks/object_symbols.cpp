#include "collectors/stacks/object_symbols.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace ccdiag {

int open_in_target_root(pid_t pid, const char* path) {
  const std::string rootdir = "/proc/" + std::to_string(pid) + "/root";
  const int dfd = ::open(rootdir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return -1;
  open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  int fd = static_cast<int>(::syscall(SYS_openat2, dfd, path, &how, sizeof how));
  const int err = errno;
  ::close(dfd);
  if (fd < 0) {
    errno = err;
    return -1;
  }
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

// A read-only private mapping of a whole file: pages are read only where a
// name or a header is looked at.
struct ObjectSymbols::Mapping {
  const char* data = nullptr;
  size_t size = 0;
  uint64_t st_size = 0;
  int64_t mtime_ns = 0;
  std::optional<ElfView> elf;

  static std::unique_ptr<Mapping> from_fd(int fd) {
    struct stat st{};
    if (fd < 0) return nullptr;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
      ::close(fd);
      return nullptr;
    }
    void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) return nullptr;
    auto m = std::make_unique<Mapping>();
    m->data = static_cast<const char*>(p);
    m->size = static_cast<size_t>(st.st_size);
    m->st_size = static_cast<uint64_t>(st.st_size);
    m->mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    m->elf = ElfView::parse(std::string_view(m->data, m->size));
    return m;
  }
  ~Mapping() {
    if (data) ::munmap(const_cast<char*>(data), size);
  }
  std::string_view bytes() const { return {data, size}; }
};

ObjectSymbols::ObjectSymbols(pid_t pid, const std::string& path, const ObjectCache* cache, SymbolCacheStats* stats)
    : cache_(cache), stats_(stats) {
  if (path.empty() || path[0] != '/') return;
  object_ = Mapping::from_fd(open_in_target_root(pid, path.c_str()));
  if (!object_ || !object_->elf || object_->elf->sections().empty()) return;
  const ElfView& obj = *object_->elf;
  build_id_ = obj.build_id();
  guard_.object_size = object_->st_size;
  guard_.object_mtime_ns = object_->mtime_ns;
  // Separate debuginfo by build-id on the host, as libdwfl's lookup does.
  if (build_id_.size() > 2) {
    const std::string dbg = "/usr/lib/debug/.build-id/" + build_id_.substr(0, 2) + "/" + build_id_.substr(2) + ".debug";
    debug_ = Mapping::from_fd(::open(dbg.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (debug_ && (!debug_->elf || debug_->elf->build_id() != build_id_)) debug_.reset();
    if (debug_) {
      guard_.debug_size = debug_->st_size;
      guard_.debug_mtime_ns = debug_->mtime_ns;
    }
  }
  const CacheKey key{"sym", build_id_, SymbolIndex::kVersion};
  if (cache_ && !build_id_.empty())
    if (auto payload = cache_->load(key, guard_))
      if (auto idx = SymbolIndex::parse(*payload)) {
        // The cached choice of table must still be available in the files.
        if (idx->source() != SymbolIndex::Source::debug_symtab || debug_) {
          index_ = std::move(*idx);
          if (stats_) ++stats_->index_hits;
          return;
        }
      }
  // libdwfl's order: the object's .symtab, the debuginfo's, then .dynsym
  // (a MiniDebugInfo table would come before .dynsym: left to libdwfl).
  index_ = SymbolIndex::build(obj, obj, true, SymbolIndex::Source::object_symtab);
  if (!index_ && debug_) index_ = SymbolIndex::build(*debug_->elf, obj, true, SymbolIndex::Source::debug_symtab);
  if (!index_) {
    if (obj.section(".gnu_debugdata")) return;
    index_ = SymbolIndex::build(obj, obj, false, SymbolIndex::Source::object_dynsym);
  }
  if (!index_) return;
  if (stats_) ++stats_->index_built;
  if (cache_ && !build_id_.empty() && cache_->store(key, guard_, index_->serialize()).ok() && stats_) ++stats_->stored;
}

ObjectSymbols::~ObjectSymbols() = default;

std::optional<std::string> ObjectSymbols::function(uint64_t rel) const {
  if (!index_) return std::nullopt;
  auto hit = index_->lookup(rel);
  if (!hit) return std::nullopt;
  const Mapping* src = index_->source() == SymbolIndex::Source::debug_symtab ? debug_.get() : object_.get();
  if (!src) return std::nullopt;
  const std::string_view n = index_->name_in(src->bytes(), *hit);
  if (n.empty()) return std::nullopt;
  return std::string(n);
}

std::optional<FileLine> ObjectSymbols::line(uint64_t rel, const std::function<std::optional<FileLine>()>& dwarf) {
  if (!memo_) {
    memo_.emplace();
    if (cache_ && !build_id_.empty())
      if (auto payload = cache_->load(CacheKey{"line", build_id_, LineMemo::kVersion}, guard_))
        if (auto m = LineMemo::parse(*payload)) memo_ = std::move(*m);
  }
  if (auto known = memo_->find(rel)) {
    if (stats_) ++stats_->line_hits;
    return *known;
  }
  if (stats_) ++stats_->line_lookups;
  auto answer = dwarf();
  memo_->put(rel, answer);
  return answer;
}

void ObjectSymbols::flush() {
  if (!memo_ || !memo_->changed() || !cache_ || build_id_.empty()) return;
  if (cache_->store(CacheKey{"line", build_id_, LineMemo::kVersion}, guard_, memo_->serialize()).ok() && stats_)
    ++stats_->stored;
}

}  // namespace ccdiag
