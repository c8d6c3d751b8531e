#include "sys/memory_reader.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace ccdiag {

size_t LiveMemoryReader::read(uint64_t addr, void* out, size_t len) const {
  size_t done = 0;
  // process_vm_readv returns a short count at the first unmapped page and
  // fails with EFAULT when the very first byte is unreadable (measured on 6.x,
  // see docs/stacks.md): retry after a short count, stop at the first failure.
  while (done < len) {
    iovec local{static_cast<char*>(out) + done, len - done};
    iovec remote{reinterpret_cast<void*>(addr + done), len - done};
    const ssize_t n = ::process_vm_readv(pid_, &local, 1, &remote, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

BufferMemoryReader::BufferMemoryReader(std::vector<Region> regions) : regions_(std::move(regions)) {
  std::sort(regions_.begin(), regions_.end(), [](const Region& a, const Region& b) { return a.base < b.base; });
}

void BufferMemoryReader::add(uint64_t base, std::vector<uint8_t> bytes) {
  regions_.push_back(Region{base, std::move(bytes)});
  std::sort(regions_.begin(), regions_.end(), [](const Region& a, const Region& b) { return a.base < b.base; });
}

size_t BufferMemoryReader::read(uint64_t addr, void* out, size_t len) const {
  // Last region whose base <= addr.
  auto it = std::upper_bound(regions_.begin(), regions_.end(), addr,
                             [](uint64_t a, const Region& r) { return a < r.base; });
  if (it == regions_.begin()) return 0;
  --it;
  const uint64_t off = addr - it->base;
  if (off >= it->bytes.size()) return 0;
  const size_t n = std::min<size_t>(len, it->bytes.size() - off);
  std::memcpy(out, it->bytes.data() + off, n);
  return n;
}

const PageCachedMemoryReader::Page* PageCachedMemoryReader::page(uint64_t base) const {
  if (auto it = pages_.find(base); it != pages_.end()) return it->second.get();
  if (pages_.size() >= kMaxPages) return nullptr;
  auto p = std::make_unique<Page>();
  p->size = inner_.read(base, p->bytes, kPage);
  return pages_.emplace(base, std::move(p)).first->second.get();
}

size_t PageCachedMemoryReader::read(uint64_t addr, void* out, size_t len) const {
  // A large read is one system call anyway, and would only fill the cache.
  if (len > 2 * kPage) return inner_.read(addr, out, len);
  size_t done = 0;
  while (done < len) {
    const uint64_t at = addr + done;
    if (at < addr) break;  // wrapped past the top of the address space
    const uint64_t base = at & ~(kPage - 1);
    const Page* p = page(base);
    // Cache full, or a page not wholly readable from its start (a live
    // process maps whole pages; a core or a buffer may begin or end inside
    // one): the rest is read as asked, so the answer is the inner reader's.
    if (!p || p->size < kPage) return done + inner_.read(at, static_cast<char*>(out) + done, len - done);
    const size_t off = static_cast<size_t>(at - base);
    const size_t n = std::min(len - done, static_cast<size_t>(kPage) - off);
    std::memcpy(static_cast<char*>(out) + done, p->bytes + off, n);
    done += n;
  }
  return done;
}

}  // namespace ccdiag
