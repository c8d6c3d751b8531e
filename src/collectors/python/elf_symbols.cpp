#include "collectors/python/elf_symbols.hpp"

#include <cstring>
#include <elf.h>

namespace ccdiag::python {

namespace {

template <class T>
bool get(const std::string& b, uint64_t off, T& out) {
  if (off > b.size() || b.size() - off < sizeof(T)) return false;
  std::memcpy(&out, b.data() + off, sizeof(T));
  return true;
}

std::string_view cstr(const std::string& b, uint64_t off) {
  if (off >= b.size()) return {};
  const char* s = b.data() + off;
  return std::string_view(s, strnlen(s, b.size() - off));
}

}  // namespace

std::optional<ElfImage> ElfImage::parse(std::string bytes) {
  Elf64_Ehdr eh;
  if (!get(bytes, 0, eh)) return std::nullopt;
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return std::nullopt;
  ElfImage img;
  img.type_ = eh.e_type;
  for (uint16_t i = 0; i < eh.e_phnum && i < 4096; ++i) {
    Elf64_Phdr ph;
    if (!get(bytes, eh.e_phoff + uint64_t(i) * sizeof ph, ph)) break;
    if (ph.p_type == PT_LOAD) {
      const uint64_t align = ph.p_align ? ph.p_align : 1;
      img.first_load_ = ph.p_vaddr - ph.p_vaddr % align;
      break;
    }
  }
  img.b_ = std::move(bytes);
  return img;
}

std::optional<ElfSymbol> ElfImage::symbol(std::string_view name) const {
  Elf64_Ehdr eh;
  if (!get(b_, 0, eh)) return std::nullopt;
  // .dynsym first: it survives stripping (python3.X exports _PyRuntime).
  for (uint32_t want : {uint32_t(SHT_DYNSYM), uint32_t(SHT_SYMTAB)}) {
    for (uint16_t i = 0; i < eh.e_shnum && i < 65535; ++i) {
      Elf64_Shdr sh, str;
      if (!get(b_, eh.e_shoff + uint64_t(i) * sizeof sh, sh) || sh.sh_type != want) continue;
      if (!get(b_, eh.e_shoff + uint64_t(sh.sh_link) * sizeof str, str)) continue;
      const uint64_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
      for (uint64_t k = 0; k < n; ++k) {
        Elf64_Sym s;
        if (!get(b_, sh.sh_offset + k * sizeof s, s)) break;
        if (s.st_shndx == SHN_UNDEF || s.st_name >= str.sh_size) continue;
        if (cstr(b_, str.sh_offset + s.st_name) == name) return ElfSymbol{s.st_value, s.st_size};
      }
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> ElfImage::section_addr(std::string_view name) const {
  Elf64_Ehdr eh;
  Elf64_Shdr names;
  if (!get(b_, 0, eh) || !get(b_, eh.e_shoff + uint64_t(eh.e_shstrndx) * sizeof names, names)) return std::nullopt;
  for (uint16_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    if (!get(b_, eh.e_shoff + uint64_t(i) * sizeof sh, sh)) break;
    if (sh.sh_name < names.sh_size && cstr(b_, names.sh_offset + sh.sh_name) == name) return sh.sh_addr;
  }
  return std::nullopt;
}

}  // namespace ccdiag::python
