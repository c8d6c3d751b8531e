// MemoryReader: reads bytes of another address space (a live process, a core, a buffer).
// Walkers (the unwinder, later the CPython and NCCL walkers) read remote memory
// only through this interface, so they are tested from byte buffers and
// captured snapshots instead of live processes.
//
// Implementations:
//   - LiveMemoryReader: process_vm_readv(2) on a live pid/tid. Needs ptrace
//     ATTACH access (same uid and Yama allowing it, or CAP_SYS_PTRACE). Never
//     writes. Reads that cross into an unmapped page return the bytes before
//     the hole (short count), which the caller sees as `n < len`.
//   - BufferMemoryReader: a list of (base address, bytes) regions held in
//     memory; reads outside every region fail.
//   - PageCachedMemoryReader: another reader behind a cache of whole 4 KiB
//     pages. A walker of CPython's objects makes hundreds of 8-byte reads,
//     most on a few pages; one system call per page instead of per read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <memory>
#include <sys/types.h>
#include <unordered_map>
#include <vector>

namespace ccdiag {

class MemoryReader {
 public:
  virtual ~MemoryReader() = default;
  // Copies up to `len` bytes at remote address `addr` into `out`; returns the
  // number of bytes copied (0 when nothing at `addr` is readable).
  virtual size_t read(uint64_t addr, void* out, size_t len) const = 0;

  bool read_exact(uint64_t addr, void* out, size_t len) const { return read(addr, out, len) == len; }

  // Where a scan that found nothing readable at `addr` should look next: the
  // next page by default; a core knows its dumped ranges and skips a hole of
  // 2^50 bytes at once instead of page by page.
  virtual uint64_t next_readable(uint64_t addr) const { return (addr + 4096) & ~uint64_t(4095); }
};

// A typed remote address: RemotePtr<uint64_t>{0x7ffd...}.read(reader).
template <class T>
struct RemotePtr {
  uint64_t addr = 0;
  std::optional<T> read(const MemoryReader& m) const {
    T v;
    if (!m.read_exact(addr, &v, sizeof v)) return std::nullopt;
    return v;
  }
  RemotePtr<T> operator+(int64_t n) const { return RemotePtr<T>{addr + static_cast<uint64_t>(n) * sizeof(T)}; }
  bool null() const { return addr == 0; }
};

class LiveMemoryReader final : public MemoryReader {
 public:
  explicit LiveMemoryReader(pid_t pid) : pid_(pid) {}
  size_t read(uint64_t addr, void* out, size_t len) const override;

 private:
  pid_t pid_;
};

class BufferMemoryReader final : public MemoryReader {
 public:
  struct Region {
    uint64_t base = 0;
    std::vector<uint8_t> bytes;
  };
  BufferMemoryReader() = default;
  explicit BufferMemoryReader(std::vector<Region> regions);
  void add(uint64_t base, std::vector<uint8_t> bytes);
  size_t read(uint64_t addr, void* out, size_t len) const override;

 private:
  std::vector<Region> regions_;  // sorted by base, non-overlapping
};

// Reads through `inner` a page at a time and keeps the pages (at most
// kMaxPages; past that, reads go straight through). The bytes are those of
// the first read of each page: a snapshot per page of a process that may be
// running, which is what the walkers expect of any read anyway.
class PageCachedMemoryReader final : public MemoryReader {
 public:
  static constexpr uint64_t kPage = 4096;
  static constexpr size_t kMaxPages = 4096;  // 16 MiB
  explicit PageCachedMemoryReader(const MemoryReader& inner) : inner_(inner) {}
  size_t read(uint64_t addr, void* out, size_t len) const override;
  uint64_t next_readable(uint64_t addr) const override { return inner_.next_readable(addr); }

 private:
  struct Page {
    size_t size = 0;  // readable bytes from the page's start (0: none)
    uint8_t bytes[kPage];
  };
  const Page* page(uint64_t base) const;
  const MemoryReader& inner_;
  mutable std::unordered_map<uint64_t, std::unique_ptr<Page>> pages_;
};

}  // namespace ccdiag
