#include "collectors/stacks/symbol_index.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>

namespace ccdiag {

namespace {

constexpr uint32_t kMagic = 0x584d5953;  // "SYMX"

struct PayloadHeader {
  uint32_t magic;
  uint32_t version;
  uint8_t source;
  uint8_t pad[7];
  uint64_t strtab_offset;
  uint64_t strtab_size;
  uint32_t n_global;
  uint32_t n_local;
  uint32_t n_sections;
  uint32_t pad2;
};
static_assert(sizeof(PayloadHeader) == 48, "payload layout");
static_assert(sizeof(SymbolIndex::Entry) == 32, "payload layout");
static_assert(sizeof(SymbolIndex::Section) == 24, "payload layout");

uint8_t binding_rank(unsigned char info) {
  switch (ELF64_ST_BIND(info)) {
    case STB_GLOBAL: return 3;
    case STB_WEAK: return 2;
    case STB_LOCAL: return 1;
    default: return 0;
  }
}

bool by_start(const SymbolIndex::Entry& a, const SymbolIndex::Entry& b) {
  return a.start != b.start ? a.start < b.start : a.order < b.order;
}

uint64_t end_of(const SymbolIndex::Entry& e) {
  const uint64_t end = e.start + e.size;
  return end < e.start ? UINT64_MAX : end;  // saturate a hostile size
}

// How far a lookup walks back over symbols that start below the address but
// might still contain it; real tables need one or two steps.
constexpr int kMaxBackSteps = 4096;

}  // namespace

void SymbolIndex::Group::finish() {
  max_end.resize(entries.size());
  uint64_t m = 0;
  for (size_t i = 0; i < entries.size(); ++i) max_end[i] = m = std::max(m, end_of(entries[i]));
}

std::optional<SymbolIndex> SymbolIndex::build(const ElfView& elf, const ElfView& object, bool symtab, Source source) {
  const auto secs = elf.sections();
  const uint32_t want = symtab ? SHT_SYMTAB : SHT_DYNSYM;
  const ElfSection* tab = nullptr;
  for (const auto& s : secs)
    if (s.type == want && s.size > 0) {
      tab = &s;
      break;
    }
  if (!tab || tab->entsize != sizeof(Elf64_Sym) || tab->link >= secs.size()) return std::nullopt;
  const ElfSection& str = secs[tab->link];
  if (str.type != SHT_STRTAB) return std::nullopt;
  const std::string_view syms = elf.section_bytes(*tab);
  const std::string_view strs = elf.section_bytes(str);
  if (strs.size() != str.size || str.size > UINT32_MAX) return std::nullopt;

  SymbolIndex idx;
  idx.source_ = source;
  idx.strtab_offset_ = str.offset;
  idx.strtab_size_ = str.size;
  const size_t n = syms.size() / sizeof(Elf64_Sym);
  // libdwfl: sh_info is the first global; 0 (no split known) searches all as globals.
  const size_t first_global = std::max<size_t>(tab->info, 1);
  for (size_t i = 1; i < n && i < UINT32_MAX; ++i) {
    Elf64_Sym s;
    std::memcpy(&s, syms.data() + i * sizeof s, sizeof s);
    const unsigned type = ELF64_ST_TYPE(s.st_info);
    if (s.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE || type == STT_TLS) continue;
    if (s.st_name == 0 || s.st_name >= strs.size() || strs[s.st_name] == '\0') continue;
    Entry e;
    e.start = s.st_value;
    e.size = s.st_size;
    e.name = s.st_name;
    e.order = static_cast<uint32_t>(i);
    e.shndx = s.st_shndx;
    e.bind = binding_rank(s.st_info);
    (i >= first_global ? idx.global_ : idx.local_).entries.push_back(e);
  }
  for (Group* g : {&idx.global_, &idx.local_}) {
    std::sort(g->entries.begin(), g->entries.end(), by_start);
    g->finish();
  }
  // libdwfl's section cache: the object's SHF_ALLOC sections by address.
  const auto osecs = object.sections();
  for (uint32_t i = 1; i < osecs.size(); ++i)
    if (osecs[i].flags & SHF_ALLOC)
      idx.sections_.push_back(Section{i, 0, osecs[i].addr, osecs[i].addr + osecs[i].size});
  std::sort(idx.sections_.begin(), idx.sections_.end(), [](const Section& a, const Section& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end < b.end;
    return a.index < b.index;
  });
  return idx;
}

std::string SymbolIndex::serialize() const {
  PayloadHeader h;
  std::memset(&h, 0, sizeof h);
  h.magic = kMagic;
  h.version = kVersion;
  h.source = static_cast<uint8_t>(source_);
  h.strtab_offset = strtab_offset_;
  h.strtab_size = strtab_size_;
  h.n_global = static_cast<uint32_t>(global_.entries.size());
  h.n_local = static_cast<uint32_t>(local_.entries.size());
  h.n_sections = static_cast<uint32_t>(sections_.size());
  std::string out(reinterpret_cast<const char*>(&h), sizeof h);
  auto put = [&out](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); };
  put(global_.entries.data(), global_.entries.size() * sizeof(Entry));
  put(local_.entries.data(), local_.entries.size() * sizeof(Entry));
  put(sections_.data(), sections_.size() * sizeof(Section));
  return out;
}

Result<SymbolIndex> SymbolIndex::parse(std::string_view p) {
  auto bad = [](const char* why) { return make_error(std::string("symbol index: ") + why, "symbol cache"); };
  PayloadHeader h;
  if (p.size() < sizeof h) return bad("truncated header");
  std::memcpy(&h, p.data(), sizeof h);
  if (h.magic != kMagic || h.version != kVersion) return bad("wrong magic or version");
  if (h.source > static_cast<uint8_t>(Source::object_dynsym)) return bad("unknown source");
  if (h.strtab_size > UINT32_MAX || h.n_sections > 65535) return bad("implausible sizes");
  const uint64_t want = sizeof h + (uint64_t(h.n_global) + h.n_local) * sizeof(Entry) + uint64_t(h.n_sections) * sizeof(Section);
  if (want != p.size()) return bad("size does not match its counts");
  SymbolIndex idx;
  idx.source_ = static_cast<Source>(h.source);
  idx.strtab_offset_ = h.strtab_offset;
  idx.strtab_size_ = h.strtab_size;
  size_t off = sizeof h;
  for (auto [g, n] : {std::pair{&idx.global_, h.n_global}, std::pair{&idx.local_, h.n_local}}) {
    g->entries.resize(n);
    std::memcpy(g->entries.data(), p.data() + off, n * sizeof(Entry));
    off += n * sizeof(Entry);
    for (size_t i = 0; i < n; ++i) {
      const Entry& e = g->entries[i];
      if (e.name == 0 || e.name >= h.strtab_size || e.bind > 3) return bad("entry out of range");
      if (i > 0 && by_start(e, g->entries[i - 1])) return bad("entries not sorted");
    }
    g->finish();
  }
  idx.sections_.resize(h.n_sections);
  std::memcpy(idx.sections_.data(), p.data() + off, h.n_sections * sizeof(Section));
  for (size_t i = 0; i < idx.sections_.size(); ++i) {
    const Section& s = idx.sections_[i];
    if (s.end < s.start || (i > 0 && s.start < idx.sections_[i - 1].start)) return bad("sections not sorted");
  }
  return idx;
}

int SymbolIndex::section_of(uint64_t addr) const {
  // libdwfl's find_section: binary search, a section's end address inside it
  // unless the next section starts there. -1: in no section.
  size_t l = 0, u = sections_.size();
  while (l < u) {
    const size_t i = (l + u) / 2;
    if (addr < sections_[i].start) {
      u = i;
    } else if (addr > sections_[i].end) {
      l = i + 1;
    } else {
      if (addr == sections_[i].end && i + 1 < sections_.size() && addr == sections_[i + 1].start) return static_cast<int>(sections_[i + 1].index);
      return static_cast<int>(sections_[i].index);
    }
  }
  return -1;
}

bool SymbolIndex::same_section(uint64_t addr, const Entry& e) const {
  // Absolute and other special symbols match only exactly.
  if (e.shndx >= SHN_LORESERVE) return e.start == addr;
  return section_of(addr) == section_of(e.start);
}

struct SymbolIndex::State {
  const Entry* closest = nullptr;
  const Entry* sizeless = nullptr;
  uint64_t min_label = 0;
};

void SymbolIndex::search(const Group& g, uint64_t addr, State& st) const {
  const auto& es = g.entries;
  auto it = std::upper_bound(es.begin(), es.end(), addr, [](uint64_t a, const Entry& e) { return a < e.start; });
  if (it == es.begin()) return;
  const size_t top = static_cast<size_t>(it - es.begin()) - 1;
  // Every symbol at or below ADDR pushes the label floor up to its end.
  st.min_label = std::max(st.min_label, g.max_end[top]);
  // Sized symbols that contain ADDR, visited in table order as libdwfl does.
  const Entry* cands[64];
  size_t nc = 0;
  int steps = 0;
  for (size_t j = top + 1; j-- > 0 && g.max_end[j] > addr && steps < kMaxBackSteps; ++steps) {
    const Entry& e = es[j];
    if (e.size != 0 && addr - e.start < e.size && nc < std::size(cands)) cands[nc++] = &e;
  }
  std::sort(cands, cands + nc, [](const Entry* a, const Entry* b) { return a->order < b->order; });
  for (size_t k = 0; k < nc; ++k) {
    const Entry& e = *cands[k];
    const Entry* c = st.closest;
    if (!c || c->start < e.start || c->bind < e.bind)
      st.closest = &e;
    else if (c->start == e.start && ((c->size > e.size && c->bind <= e.bind) || (c->size >= e.size && c->bind < e.bind)))
      st.closest = &e;
  }
  if (st.closest) return;
  // A label can only survive at the highest start: the last one in table
  // order there (entries at equal start are sorted by order), same section.
  const uint64_t h = es[top].start;
  if (st.sizeless && st.sizeless->start > h) return;
  for (size_t j = top + 1; j-- > 0 && es[j].start == h;)
    if (es[j].size == 0 && same_section(addr, es[j])) {
      st.sizeless = &es[j];
      break;
    }
}

std::optional<SymbolIndex::Hit> SymbolIndex::lookup(uint64_t addr) const {
  State st;
  search(global_, addr, st);
  if (!st.closest && !local_.entries.empty() && (!st.sizeless || st.sizeless->start != addr)) search(local_, addr, st);
  const Entry* e = st.closest;
  if (!e && st.sizeless && st.sizeless->start >= st.min_label) e = st.sizeless;
  if (!e) return std::nullopt;
  return Hit{e->start, e->name};
}

std::string_view SymbolIndex::name_in(std::string_view file, const Hit& h) const {
  if (strtab_offset_ > file.size() || file.size() - strtab_offset_ < strtab_size_ || h.name >= strtab_size_) return {};
  const std::string_view tab = file.substr(strtab_offset_, strtab_size_);
  const size_t nul = tab.find('\0', h.name);
  if (nul == std::string_view::npos) return {};
  return tab.substr(h.name, nul - h.name);
}

}  // namespace ccdiag
