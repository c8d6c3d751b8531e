#include "collectors/nccl/attach/core_file.hpp"

#include <algorithm>
#include <cstring>

namespace ccdiag::nccl::attach {

namespace {

template <class T>
bool get(std::string_view b, uint64_t off, T& out) {
  return read_pod(b, off, out);
}

// struct elf_prstatus (x86_64): pr_pid at 32, pr_reg (user_regs_struct, 27
// longs) at 112; in pr_reg rip is #16, rsp #19, fs_base #21.
constexpr uint64_t kPrPid = 32, kPrCursig = 12, kPrReg = 112;

void parse_nt_file(std::string_view d, std::vector<CoreMappedFile>& out) {
  uint64_t count = 0, page = 0;
  if (!get(d, 0, count) || !get(d, 8, page)) return;
  if (count > (d.size() / 24)) return;  // hostile count
  uint64_t names = 16 + count * 24;
  for (uint64_t i = 0; i < count; ++i) {
    CoreMappedFile f;
    uint64_t pgoff = 0;
    get(d, 16 + i * 24, f.start);
    get(d, 16 + i * 24 + 8, f.end);
    get(d, 16 + i * 24 + 16, pgoff);
    f.file_offset = pgoff * page;
    if (names >= d.size()) break;
    const char* s = d.data() + names;
    size_t n = strnlen(s, d.size() - names);
    f.path.assign(s, n);
    names += n + 1;
    out.push_back(std::move(f));
  }
}

}  // namespace

Result<CoreFile> CoreFile::open(const std::string& path) {
  auto mf = MappedFile::open(path);
  if (!mf) return mf.error();
  CoreFile c;
  c.file_ = std::move(*mf);
  return parse(std::move(c), path);
}

Result<CoreFile> CoreFile::from_bytes(std::string bytes, const std::string& name) {
  CoreFile c;
  c.owned_ = std::move(bytes);
  return parse(std::move(c), name);
}

Result<CoreFile> CoreFile::parse(CoreFile c, const std::string& path) {
  auto elf = ElfView::parse(c.bytes());
  if (!elf) return make_error("not an ELF64 little-endian file", path);
  if (elf->type() != ET_CORE) return make_error("an ELF file but not a core dump (e_type is not ET_CORE)", path);
  c.machine_ = elf->machine();
  const uint64_t fsize = c.bytes().size();
  for (const auto& s : elf->segments()) {
    if (s.type != PT_LOAD) continue;
    CoreLoad l{s.vaddr, s.memsz, s.offset, s.filesz, s.flags};
    if (s.filesz > 0 && (s.offset >= fsize || fsize - s.offset < s.filesz)) {
      c.truncated_ = true;
      const uint64_t have = s.offset >= fsize ? 0 : fsize - s.offset;
      c.missing_bytes_ += s.filesz - have;
      l.filesz = have;
    }
    c.loads_.push_back(l);
  }
  if (c.loads_.empty()) return make_error("core dump without any memory segment (PT_LOAD)", path);
  std::sort(c.loads_.begin(), c.loads_.end(), [](const CoreLoad& a, const CoreLoad& b) { return a.vaddr < b.vaddr; });
  for (const auto& l : c.loads_) {
    if (l.filesz == 0) continue;
    const uint64_t end = l.vaddr + l.filesz < l.vaddr ? UINT64_MAX : l.vaddr + l.filesz;
    if (!c.dumped_.empty() && l.vaddr <= c.dumped_.back().second)
      c.dumped_.back().second = std::max(c.dumped_.back().second, end);
    else
      c.dumped_.emplace_back(l.vaddr, end);
  }
  for (const auto& n : elf->notes()) {
    if (n.name != "CORE") continue;
    if (n.type == NT_FILE) {
      parse_nt_file(n.desc, c.files_);
    } else if (n.type == NT_PRSTATUS) {
      CoreThread t;
      int32_t pid = 0;
      int16_t sig = 0;
      get(n.desc, kPrPid, pid);
      get(n.desc, kPrCursig, sig);
      t.tid = pid;
      t.signal = sig;
      if (c.machine_ == EM_X86_64) {
        get(n.desc, kPrReg + 16 * 8, t.pc);
        get(n.desc, kPrReg + 19 * 8, t.sp);
        get(n.desc, kPrReg + 21 * 8, t.fs_base);
      }
      if (c.threads_.empty()) c.pid_ = pid;  // the first NT_PRSTATUS is the thread that dumped
      c.threads_.push_back(t);
    } else if (n.type == NT_PRPSINFO) {
      // struct elf_prpsinfo (x86_64): pr_fname[16] at 40, pr_pid at 24.
      if (n.desc.size() >= 56) {
        const char* s = n.desc.data() + 40;
        c.command_.assign(s, strnlen(s, 16));
        int32_t pid = 0;
        if (get(n.desc, 24, pid) && pid > 0) c.pid_ = pid;
      }
    }
  }
  return c;
}

uint64_t CoreFile::next_readable(uint64_t addr) const {
  // First merged range ending after `addr`.
  auto it = std::upper_bound(dumped_.begin(), dumped_.end(), addr,
                             [](uint64_t a, const std::pair<uint64_t, uint64_t>& r) { return a < r.second; });
  if (it == dumped_.end()) return UINT64_MAX;
  return std::max(addr, it->first);
}

size_t CoreFile::read(uint64_t addr, void* out, size_t len) const {
  size_t done = 0;
  auto* dst = static_cast<char*>(out);
  const std::string_view b = bytes();
  while (done < len) {
    const uint64_t a = addr + done;
    // Last segment starting at or below `a`.
    auto it = std::upper_bound(loads_.begin(), loads_.end(), a,
                               [](uint64_t v, const CoreLoad& l) { return v < l.vaddr; });
    if (it == loads_.begin()) break;
    const CoreLoad& l = *std::prev(it);
    if (a >= l.vaddr + l.filesz) break;  // not dumped, truncated or unmapped
    const uint64_t in_seg = a - l.vaddr;
    const uint64_t n = std::min<uint64_t>(len - done, l.filesz - in_seg);
    const uint64_t off = l.offset + in_seg;
    if (off >= b.size()) break;
    const uint64_t m = std::min<uint64_t>(n, b.size() - off);
    std::memcpy(dst + done, b.data() + off, m);
    done += m;
    if (m < n) break;
  }
  return done;
}

}  // namespace ccdiag::nccl::attach
