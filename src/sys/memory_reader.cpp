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

}  // namespace ccdiag
