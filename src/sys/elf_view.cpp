#include "sys/elf_view.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ccdiag {

MappedFile::MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_) {
  o.data_ = nullptr;
  o.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    if (data_) munmap(data_, size_);
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_) munmap(data_, size_);
}

Result<MappedFile> MappedFile::open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return make_error(std::strerror(errno), path);
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error("not a regular file", path);
  }
  MappedFile f;
  if (st.st_size > 0) {
    void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      return make_error(std::string("mmap: ") + std::strerror(e), path);
    }
    f.data_ = p;
    f.size_ = static_cast<size_t>(st.st_size);
  }
  ::close(fd);
  return f;
}

namespace {

template <class T>
bool get(std::string_view b, uint64_t off, T& out) {
  return read_pod(b, off, out);
}

std::string_view cstr(std::string_view b, uint64_t off) {
  if (off >= b.size()) return {};
  const char* s = b.data() + off;
  return {s, strnlen(s, b.size() - off)};
}

std::string_view clip(std::string_view b, uint64_t off, uint64_t size) {
  if (off >= b.size()) return {};
  return b.substr(off, std::min<uint64_t>(size, b.size() - off));
}

uint64_t align4(uint64_t v) { return (v + 3) & ~uint64_t(3); }

void walk_notes(std::string_view area, std::vector<ElfNote>& out) {
  uint64_t off = 0;
  while (off + 12 <= area.size()) {
    uint32_t namesz = 0, descsz = 0, type = 0;
    get(area, off, namesz);
    get(area, off + 4, descsz);
    get(area, off + 8, type);
    const uint64_t name_off = off + 12;
    const uint64_t desc_off = name_off + align4(namesz);
    if (desc_off > area.size() || area.size() - desc_off < descsz) return;  // truncated note
    ElfNote n;
    n.type = type;
    n.name = area.substr(name_off, namesz ? namesz - 1 : 0);
    n.desc = area.substr(desc_off, descsz);
    out.push_back(n);
    off = desc_off + align4(descsz);
  }
}

}  // namespace

std::optional<ElfView> ElfView::parse(std::string_view bytes) {
  Elf64_Ehdr eh;
  if (!get(bytes, 0, eh)) return std::nullopt;
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return std::nullopt;
  ElfView v;
  v.b_ = bytes;
  v.type_ = eh.e_type;
  v.machine_ = eh.e_machine;
  return v;
}

std::vector<ElfSegment> ElfView::segments() const {
  std::vector<ElfSegment> out;
  Elf64_Ehdr eh;
  if (!get(b_, 0, eh) || eh.e_phentsize != sizeof(Elf64_Phdr)) return out;
  for (uint32_t i = 0; i < eh.e_phnum && i < 65535; ++i) {
    Elf64_Phdr ph;
    if (!get(b_, eh.e_phoff + uint64_t(i) * sizeof ph, ph)) break;
    out.push_back({ph.p_type, ph.p_flags, ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz, ph.p_align});
  }
  return out;
}

std::vector<ElfSection> ElfView::sections() const {
  std::vector<ElfSection> out;
  Elf64_Ehdr eh;
  if (!get(b_, 0, eh) || eh.e_shentsize != sizeof(Elf64_Shdr)) return out;
  Elf64_Shdr strtab{};
  const bool have_names = get(b_, eh.e_shoff + uint64_t(eh.e_shstrndx) * sizeof strtab, strtab);
  for (uint32_t i = 0; i < eh.e_shnum && i < 65535; ++i) {
    Elf64_Shdr sh;
    if (!get(b_, eh.e_shoff + uint64_t(i) * sizeof sh, sh)) break;
    ElfSection s;
    if (have_names && sh.sh_name < strtab.sh_size) s.name = cstr(b_, strtab.sh_offset + sh.sh_name);
    s.type = sh.sh_type;
    s.addr = sh.sh_addr;
    s.offset = sh.sh_offset;
    s.size = sh.sh_size;
    s.entsize = sh.sh_entsize;
    s.link = sh.sh_link;
    s.info = sh.sh_info;
    s.flags = sh.sh_flags;
    out.push_back(s);
  }
  return out;
}

std::optional<ElfSection> ElfView::section(std::string_view name) const {
  for (const auto& s : sections())
    if (s.name == name) return s;
  return std::nullopt;
}

std::string_view ElfView::section_bytes(const ElfSection& s) const {
  if (s.type == SHT_NOBITS) return {};
  return clip(b_, s.offset, s.size);
}

std::vector<ElfNote> ElfView::notes() const {
  std::vector<ElfNote> out;
  bool any_segment = false;
  for (const auto& seg : segments()) {
    if (seg.type != PT_NOTE) continue;
    any_segment = true;
    walk_notes(clip(b_, seg.offset, seg.filesz), out);
  }
  if (!any_segment)
    for (const auto& s : sections())
      if (s.type == SHT_NOTE) walk_notes(section_bytes(s), out);
  return out;
}

namespace {
std::string build_id_of(const std::vector<ElfNote>& notes) {
  static const char* hex = "0123456789abcdef";
  for (const auto& n : notes) {
    if (n.type != NT_GNU_BUILD_ID || n.name != "GNU") continue;
    std::string s;
    for (unsigned char c : n.desc) {
      s += hex[c >> 4];
      s += hex[c & 15];
    }
    return s;
  }
  return "";
}
}  // namespace

std::string gnu_build_id_in_notes(std::string_view area) {
  std::vector<ElfNote> notes;
  walk_notes(area, notes);
  return build_id_of(notes);
}

std::string ElfView::build_id() const {
  if (auto s = build_id_of(notes()); !s.empty()) return s;
  std::vector<ElfNote> from_sections;
  for (const auto& sec : sections())
    if (sec.type == SHT_NOTE) walk_notes(section_bytes(sec), from_sections);
  return build_id_of(from_sections);
}

std::string ElfView::debuglink() const {
  auto s = section(".gnu_debuglink");
  if (!s) return "";
  return std::string(cstr(section_bytes(*s), 0));
}

bool ElfView::has_dwarf() const {
  for (const char* n : {".debug_info", ".zdebug_info"}) {
    auto s = section(n);
    if (s && s->type != SHT_NOBITS && s->size > 0) return true;
  }
  return false;
}

std::optional<uint64_t> ElfView::symbol(std::string_view name) const {
  if (auto s = find_symbol(name, false)) return s->value;
  return std::nullopt;
}

std::optional<ElfSymbolValue> ElfView::find_symbol(std::string_view name, bool dynsym_first) const {
  const auto secs = sections();
  const uint32_t order[2] = {dynsym_first ? uint32_t(SHT_DYNSYM) : uint32_t(SHT_SYMTAB),
                             dynsym_first ? uint32_t(SHT_SYMTAB) : uint32_t(SHT_DYNSYM)};
  for (uint32_t want : order) {
    for (const auto& sh : secs) {
      if (sh.type != want || sh.link >= secs.size()) continue;
      const ElfSection& str = secs[sh.link];
      const std::string_view syms = section_bytes(sh);
      const std::string_view strs = section_bytes(str);
      for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= syms.size(); off += sizeof(Elf64_Sym)) {
        Elf64_Sym s;
        std::memcpy(&s, syms.data() + off, sizeof s);
        if (s.st_shndx == SHN_UNDEF || s.st_name >= strs.size()) continue;
        if (cstr(strs, s.st_name) == name) return ElfSymbolValue{s.st_value, s.st_size};
      }
    }
  }
  return std::nullopt;
}

uint64_t ElfView::first_load_vaddr() const {
  uint64_t best = UINT64_MAX;
  for (const auto& s : segments()) {
    if (s.type != PT_LOAD) continue;
    const uint64_t a = s.align ? s.align : 1;
    best = std::min(best, s.vaddr - s.vaddr % a);
  }
  return best == UINT64_MAX ? 0 : best;
}

}  // namespace ccdiag
