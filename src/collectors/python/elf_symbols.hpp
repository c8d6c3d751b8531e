// Minimal ELF64 reader for locating the CPython runtime: symbol values from
// .dynsym then .symtab, section addresses (.PyRuntime), the ELF type and the
// first PT_LOAD (to compute the load bias, docs/python-stacks.md). Works on
// the file mapped read-only (a 6 MB python3.11 or a libpython is never copied:
// reading it whole was most of a Python capture's time); total: malformed
// headers give an empty result, never an out-of-bounds read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sys/elf_view.hpp"

namespace ccdiag::python {

struct ElfSymbol {
  uint64_t value = 0;
  uint64_t size = 0;
};

class ElfImage {
 public:
  // Maps `path` (a regular file); nullopt unless it is a little-endian ELF64 image.
  static std::optional<ElfImage> open(const std::string& path);
  std::optional<ElfSymbol> symbol(std::string_view name) const;
  std::optional<uint64_t> section_addr(std::string_view name) const;
  bool is_exec() const { return type_ == 2; }  // ET_EXEC: load bias 0
  // p_vaddr of the first PT_LOAD rounded down to its p_align.
  uint64_t first_load_vaddr() const { return first_load_; }

 private:
  MappedFile file_;
  uint16_t type_ = 0;
  uint64_t first_load_ = 0;
};

}  // namespace ccdiag::python
