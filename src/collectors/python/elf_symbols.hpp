// Minimal ELF64 reader for locating the CPython runtime: symbol values from
// .dynsym then .symtab, section addresses (.PyRuntime), the ELF type and the
// first PT_LOAD (to compute the load bias, docs/python-stacks.md). Works on
// the bytes of a file already read into memory; total: malformed headers give
// an empty result, never an out-of-bounds read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ccdiag::python {

struct ElfSymbol {
  uint64_t value = 0;
  uint64_t size = 0;
};

class ElfImage {
 public:
  // Fails (nullopt) unless the bytes are a little-endian ELF64 image.
  static std::optional<ElfImage> parse(std::string bytes);
  std::optional<ElfSymbol> symbol(std::string_view name) const;
  std::optional<uint64_t> section_addr(std::string_view name) const;
  bool is_exec() const { return type_ == 2; }  // ET_EXEC: load bias 0
  // p_vaddr of the first PT_LOAD rounded down to its p_align.
  uint64_t first_load_vaddr() const { return first_load_; }

 private:
  std::string b_;
  uint16_t type_ = 0;
  uint64_t first_load_ = 0;
};

}  // namespace ccdiag::python
