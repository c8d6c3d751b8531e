#include "collectors/python/elf_symbols.hpp"

#include "sys/elf_view.hpp"

namespace ccdiag::python {

std::optional<ElfImage> ElfImage::open(const std::string& path) {
  auto file = MappedFile::open(path);
  if (!file) return std::nullopt;
  auto view = ElfView::parse(file->bytes());
  if (!view) return std::nullopt;
  ElfImage img;
  img.type_ = view->type();
  // The first PT_LOAD (not the lowest): what the loader maps at the bias.
  for (const auto& seg : view->segments()) {
    if (seg.type != PT_LOAD) continue;
    const uint64_t align = seg.align ? seg.align : 1;
    img.first_load_ = seg.vaddr - seg.vaddr % align;
    break;
  }
  img.file_ = std::move(*file);
  return img;
}

std::optional<ElfSymbol> ElfImage::symbol(std::string_view name) const {
  // .dynsym first: it survives stripping (python3.X exports _PyRuntime).
  auto view = ElfView::parse(file_.bytes());
  if (!view) return std::nullopt;
  if (auto s = view->find_symbol(name, true)) return ElfSymbol{s->value, s->size};
  return std::nullopt;
}

std::optional<uint64_t> ElfImage::section_addr(std::string_view name) const {
  auto view = ElfView::parse(file_.bytes());
  if (!view) return std::nullopt;
  if (auto s = view->section(name)) return s->addr;
  return std::nullopt;
}

}  // namespace ccdiag::python
