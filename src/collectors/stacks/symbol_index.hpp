// SymbolIndex: the symbol table of one ELF object sorted for address lookup,
// small enough to cache on disk (sys/object_cache.hpp) and valid on its own.
//
// Why: libdwfl 0.188 answers dwfl_module_addrinfo with a linear scan of the
// whole symbol table per address (libtorch's .dynsym: 300k+ entries), after
// loading separate debuginfo to find .symtab. The index keeps only what a
// lookup needs (start, size, binding, table order, name offset) sorted by
// start; names stay in the object's own string table, read from the mapped
// file only for the frames shown.
//
// Lookup reproduces libdwfl's choice so names do not change with the cache:
// global symbols first (table order from sh_info on), locals only when no
// global matches; among sized symbols containing the address, in table order,
// a higher start or a stronger binding (GLOBAL > WEAK > LOCAL) replaces the
// candidate, and at equal start a smaller one of no weaker binding; a sizeless
// symbol (assembly label) only when no sized one matched, at the highest start
// at or below the address, in the same allocated section of the object as the
// address (a section's end address counts as inside it, as libdwfl's
// find_section has it), with no sized symbol below reaching past it (the last
// such label in table order). The unit test compares with libdwfl itself.
//
// Table choice, as libdwfl: the object's .symtab, else the separate
// debuginfo's .symtab, else .dynsym (the caller picks the file).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/result.hpp"
#include "sys/elf_view.hpp"

namespace ccdiag {

class SymbolIndex {
 public:
  static constexpr uint32_t kVersion = 2;  // of the serialized layout (cache kind_version)

  enum class Source : uint8_t { object_symtab = 0, debug_symtab = 1, object_dynsym = 2 };

  struct Entry {
    uint64_t start = 0;  // st_value (file address)
    uint64_t size = 0;
    uint32_t name = 0;   // offset into the string table
    uint32_t order = 0;  // index in the symbol table
    uint32_t shndx = 0;  // st_shndx
    uint8_t bind = 0;    // libdwfl's rank: 3 GLOBAL, 2 WEAK, 1 LOCAL, 0 other
    uint8_t pad[3] = {0, 0, 0};
  };
  struct Section {  // an SHF_ALLOC section of the object: [start, end]
    uint32_t index = 0;
    uint32_t pad = 0;
    uint64_t start = 0, end = 0;
  };

  struct Hit {
    uint64_t start = 0;
    uint32_t name = 0;
  };

  // From `symfile`'s .symtab (symtab = true) or .dynsym; nullopt when it has
  // none. `object` is the mapped object itself (its sections place addresses;
  // the same file unless the table comes from separate debuginfo).
  static std::optional<SymbolIndex> build(const ElfView& symfile, const ElfView& object, bool symtab, Source source);
  // Validates everything (sizes, sort order, name offsets); an Error on any flaw.
  static Result<SymbolIndex> parse(std::string_view payload);
  std::string serialize() const;

  std::optional<Hit> lookup(uint64_t addr) const;
  // The name of a hit read from the source file's bytes (the string table
  // recorded at build time, bounds- and NUL-checked); "" when it does not fit.
  std::string_view name_in(std::string_view file_bytes, const Hit& h) const;

  Source source() const { return source_; }
  size_t size() const { return global_.entries.size() + local_.entries.size(); }

 private:
  struct Group {
    std::vector<Entry> entries;     // sorted by start, then table order
    std::vector<uint64_t> max_end;  // max(start + size) over entries[0..i]
    void finish();
  };
  struct State;
  void search(const Group& g, uint64_t addr, State& st) const;
  int section_of(uint64_t addr) const;
  bool same_section(uint64_t addr, const Entry& e) const;

  Source source_ = Source::object_symtab;
  uint64_t strtab_offset_ = 0, strtab_size_ = 0;
  Group global_, local_;
  std::vector<Section> sections_;  // sorted by (start, end, index)
};

}  // namespace ccdiag
