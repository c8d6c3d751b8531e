// ElfView: a read-only view of a little-endian ELF64 file held in memory or
// mapped with MappedFile (a 218 MB libnccl is never copied). Total: every
// accessor bounds-checks against the view, so a truncated or hostile file
// gives empty results, never an out-of-bounds read.
//
// Used by the NCCL attach reader for shared objects (sections, .symtab,
// build-id) and for core files (program headers, PT_NOTE notes).
#pragma once

#include <elf.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/result.hpp"

namespace ccdiag {

// A file mapped read-only (MAP_PRIVATE). Empty files map to an empty view.
class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  ~MappedFile();

  // Refuses non-regular files (a FIFO or a device would block or be MMIO).
  static Result<MappedFile> open(const std::string& path);
  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

struct ElfSection {
  std::string_view name;
  uint32_t type = 0;
  uint64_t addr = 0, offset = 0, size = 0, entsize = 0;
  uint32_t link = 0;
  uint64_t flags = 0;  // sh_flags (SHF_ALLOC, ...)
  uint32_t info = 0;  // sh_info: for a symbol table, the index of its first non-local symbol
};

struct ElfSegment {
  uint32_t type = 0, flags = 0;
  uint64_t offset = 0, vaddr = 0, filesz = 0, memsz = 0, align = 0;
};

// Bounds-checked little-endian read of a T at `off` in `b` (false past the end).
template <class T>
bool read_pod(std::string_view b, uint64_t off, T& out) {
  if (off > b.size() || b.size() - off < sizeof(T)) return false;
  __builtin_memcpy(&out, b.data() + off, sizeof(T));
  return true;
}

struct ElfSymbolValue {
  uint64_t value = 0;
  uint64_t size = 0;
};

struct ElfNote {
  uint32_t type = 0;
  std::string_view name;  // "CORE", "GNU", "LINUX" (without the NUL)
  std::string_view desc;
};

// NT_GNU_BUILD_ID (lowercase hex) in a block of ELF notes, e.g. a PT_NOTE
// segment read out of a process's memory; "" when absent.
std::string gnu_build_id_in_notes(std::string_view notes);

class ElfView {
 public:
  // nullopt unless `bytes` start with an ELF64 little-endian header.
  static std::optional<ElfView> parse(std::string_view bytes);

  uint16_t type() const { return type_; }        // ET_DYN, ET_CORE, ...
  uint16_t machine() const { return machine_; }  // EM_X86_64, EM_AARCH64
  std::string_view bytes() const { return b_; }

  std::vector<ElfSegment> segments() const;
  std::vector<ElfSection> sections() const;
  std::optional<ElfSection> section(std::string_view name) const;
  // The section's bytes, clipped to the file (nobits sections are empty).
  std::string_view section_bytes(const ElfSection& s) const;

  // Notes of every PT_NOTE segment, or of SHT_NOTE sections when the file has
  // no program headers. A malformed note ends the walk of its segment.
  std::vector<ElfNote> notes() const;
  // NT_GNU_BUILD_ID as lowercase hex; "" when absent. Looks in the PT_NOTE
  // segments, then in SHT_NOTE sections (a separate debug file made by
  // `objcopy --only-keep-debug` keeps the section, not the segment contents).
  std::string build_id() const;
  // The file name `.gnu_debuglink` points to ("" when absent).
  std::string debuglink() const;
  // Whether the file holds DWARF: `.debug_info` (compressed with
  // SHF_COMPRESSED or not) or the older zlib-gnu `.zdebug_info`.
  bool has_dwarf() const;

  // st_value of the first defined symbol named `name` in .symtab then .dynsym.
  std::optional<uint64_t> symbol(std::string_view name) const;
  // The same with st_size, searching .dynsym first when `dynsym_first` (it
  // survives stripping, e.g. python3.X exports _PyRuntime there).
  std::optional<ElfSymbolValue> find_symbol(std::string_view name, bool dynsym_first) const;
  // Lowest PT_LOAD p_vaddr rounded down to its alignment (load bias base).
  uint64_t first_load_vaddr() const;

 private:
  std::string_view b_;
  uint16_t type_ = 0, machine_ = 0;
};

}  // namespace ccdiag
