#include "collectors/nccl/attach/nccl_image.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "sys/elf_view.hpp"

#include <cstring>

namespace ccdiag::nccl::attach {

namespace {

std::string basename_of(const std::string& p) {
  auto s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

bool is_libnccl(const std::string& path) {
  // libnccl.so, libnccl.so.2, libnccl.so.2.28.9 — not the net/profiler plugins.
  return basename_of(path).rfind("libnccl.so", 0) == 0;
}

// Libraries that may carry NCCL statically (older PyTorch wheels, jaxlib,
// TensorRT-LLM). Scanning every mapped library for the version string would
// read gigabytes on a PyTorch rank; these names cover the known carriers.
bool may_embed_nccl(const std::string& path) {
  const std::string b = basename_of(path);
  for (const char* k : {"nccl", "torch_cuda", "xla_extension", "jaxlib", "tensorrt_llm", "libtorch.so"})
    if (b.find(k) != std::string::npos) return true;
  return false;
}

std::string strip_deleted(std::string p) {
  const std::string tag = " (deleted)";
  if (p.size() > tag.size() && p.compare(p.size() - tag.size(), tag.size(), tag) == 0) p.resize(p.size() - tag.size());
  return p;
}

// "NCCL version 2.28.9+cuda13.0" in .rodata (or anywhere when sections are gone).
std::string find_version_string(const ElfView& elf) {
  std::string_view area = elf.bytes();
  if (auto ro = elf.section(".rodata")) area = elf.section_bytes(*ro);
  const std::string_view needle = "NCCL version ";
  size_t pos = area.find(needle);
  while (pos != std::string_view::npos) {
    size_t end = pos;
    while (end < area.size() && area[end] != '\0' && end - pos < 64) ++end;
    std::string s(area.substr(pos, end - pos));
    if (parse_nccl_version_string(s)) return s;
    pos = area.find(needle, pos + 1);
  }
  return "";
}

// `named`: the library's path as this host sees it (where .gnu_debuglink's
// file is searched); `file` may be /proc/PID/map_files/..., which has no
// meaningful directory.
bool fill_from_file(NcclImage& img, const std::string& file, uint64_t mapping_start, uint64_t mapping_offset,
                    const std::string& named = "") {
  auto mf = MappedFile::open(file);
  if (!mf) {
    img.why_not = "cannot open " + file + ": " + mf.error().message;
    return false;
  }
  auto elf = ElfView::parse(mf->bytes());
  if (!elf) {
    img.why_not = file + " is not an ELF64 library";
    return false;
  }
  img.opened = file;
  img.version_string = find_version_string(*elf);
  img.version = parse_nccl_version_string(img.version_string);
  img.build_id = elf->build_id();
  img.arch = elf->machine() == EM_X86_64 ? "x86_64" : elf->machine() == EM_AARCH64 ? "aarch64" : "other";
  img.has_symtab = elf->section(".symtab").has_value();
  img.has_debug_info = elf->has_dwarf();
  img.debug_file = img.has_debug_info ? file : find_debug_file(named.empty() ? file : named, img.build_id, elf->debuglink());
  if (!img.debug_file.empty()) img.has_debug_info = true;
  // The mapping with file offset 0 starts at the load base (+ first p_vaddr).
  if (mapping_offset == 0) img.load_base = mapping_start - elf->first_load_vaddr();
  if (auto v = elf->symbol("ncclComms")) img.ras_comms_addr = img.load_base + *v;
  if (auto v = elf->symbol("nNcclComms")) img.ras_ncomms_addr = img.load_base + *v;
  return true;
}

// The build-id of the ELF mapped at `m` (file offset 0), read from the
// target: ELF header, program headers, then the PT_NOTE they point to.
std::string build_id_in_memory(const AttachTarget& t, const TargetMapping& m) {
  if (m.offset != 0 || !t.memory) return "";
  Elf64_Ehdr eh{};
  if (!t.memory->read_exact(m.start, &eh, sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
      eh.e_phnum > 64 || eh.e_phoff > 65536)
    return "";
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  if (!t.memory->read_exact(m.start + eh.e_phoff, ph.data(), ph.size() * sizeof(Elf64_Phdr))) return "";
  uint64_t first = UINT64_MAX;
  for (const auto& p : ph)
    if (p.p_type == PT_LOAD) first = std::min(first, p.p_vaddr - (p.p_align ? p.p_vaddr % p.p_align : 0));
  if (first == UINT64_MAX) return "";
  const uint64_t base = m.start - first;
  for (const auto& p : ph) {
    if (p.p_type != PT_NOTE || p.p_filesz == 0 || p.p_filesz > 65536) continue;
    std::string buf(p.p_filesz, '\0');
    if (!t.memory->read_exact(base + p.p_vaddr, buf.data(), buf.size())) continue;
    if (auto id = gnu_build_id_in_notes(buf); !id.empty()) return id;
  }
  return "";
}

std::string dirname_of(const std::string& p) {
  auto s = p.rfind('/');
  return s == std::string::npos ? "." : s == 0 ? "/" : p.substr(0, s);
}

std::string file_build_id(const std::string& path) {
  auto mf = MappedFile::open(path);
  if (!mf) return "";
  auto elf = ElfView::parse(mf->bytes());
  return elf ? elf->build_id() : "";
}

}  // namespace

std::string find_debug_file(const std::string& library, const std::string& build_id, const std::string& debuglink) {
  std::vector<std::string> cands;
  const std::string dir = dirname_of(library);
  if (!debuglink.empty() && debuglink.find('/') == std::string::npos) {
    cands.push_back(dir + "/" + debuglink);
    cands.push_back(dir + "/.debug/" + debuglink);
    cands.push_back("/usr/lib/debug" + dir + "/" + debuglink);
  }
  if (build_id.size() > 2) {
    cands.push_back("/usr/lib/debug/.build-id/" + build_id.substr(0, 2) + "/" + build_id.substr(2) + ".debug");
    std::string cache;
    if (const char* e = std::getenv("DEBUGINFOD_CACHE_PATH"); e && *e) cache = e;
    else if (const char* h = std::getenv("HOME"); h && *h) cache = std::string(h) + "/.cache/debuginfod_client";
    if (!cache.empty()) cands.push_back(cache + "/" + build_id + "/debuginfo");
  }
  for (const auto& c : cands) {
    if (c == library || access(c.c_str(), R_OK) != 0) continue;
    auto mf = MappedFile::open(c);
    if (!mf) continue;
    auto elf = ElfView::parse(mf->bytes());
    if (!elf || !elf->has_dwarf()) continue;
    // A debug file of another build would give wrong offsets: ids must match.
    if (build_id.empty() || elf->build_id() != build_id) continue;
    return c;
  }
  return "";
}

NcclImage identify_nccl(const AttachTarget& t, const std::string& override_path) {
  NcclImage img;
  // Lowest mapping of each file: that is the one with file offset 0.
  const TargetMapping* nccl = nullptr;
  for (const auto& m : t.maps)
    if (is_libnccl(strip_deleted(m.path)) && (!nccl || m.start < nccl->start)) nccl = &m;
  std::vector<const TargetMapping*> candidates;
  if (nccl) {
    candidates.push_back(nccl);
  } else {
    std::set<std::string> seen;
    for (const auto& m : t.maps) {
      const std::string p = strip_deleted(m.path);
      if (p.empty() || p[0] != '/' || !may_embed_nccl(p) || !seen.insert(p).second) continue;
      candidates.push_back(&m);
    }
  }
  if (candidates.empty() && override_path.empty()) {
    img.why_not = "no libnccl (or library carrying NCCL) is mapped in " + t.source;
    return img;
  }
  if (!override_path.empty()) {
    img.found = true;
    img.path = nccl ? nccl->path : override_path;
    if (nccl) img.memory_build_id = build_id_in_memory(t, *nccl);
    if (!nccl) {
      // No mapped-file list (a core cut before its notes): the library's
      // mapping is the segment that starts with an ELF header of its build-id.
      const std::string want = file_build_id(override_path);
      for (const auto& m : t.maps) {
        if (want.empty() || m.offset != 0 || !m.readable) continue;
        if (build_id_in_memory(t, m) == want) {
          nccl = &m;
          img.memory_build_id = want;
          break;
        }
      }
    }
    fill_from_file(img, override_path, nccl ? nccl->start : 0, nccl ? nccl->offset : 1);
    if (!img.memory_build_id.empty() && !img.build_id.empty() && img.build_id != img.memory_build_id) {
      img.mismatch = fmt::format("--nccl-lib {} is build-id {}, but the target's {} is build-id {}: a different build, "
                                 "refused (give the libnccl of build-id {})",
                                 override_path, img.build_id, basename_of(strip_deleted(img.path)),
                                 img.memory_build_id, img.memory_build_id);
      img.override_refused = true;
    }
    return img;
  }
  for (const auto* m : candidates) {
    const std::string p = strip_deleted(m->path);
    const bool deleted = p != m->path;
    const std::string mem_id = build_id_in_memory(t, *m);
    // The mapped inode itself first (live: /proc/PID/map_files), then the path.
    std::vector<std::string> files;
    if (!t.map_files_dir.empty()) files.push_back(fmt::format("{}/{:x}-{:x}", t.map_files_dir, m->start, m->end));
    files.push_back(t.file_prefix + p);
    NcclImage tryimg;
    std::string mismatch;
    bool read = false;
    for (const auto& f : files) {
      NcclImage one;
      one.path = m->path;
      one.static_link = !is_libnccl(p);
      one.memory_build_id = mem_id;
      if (!fill_from_file(one, f, m->start, m->offset, files.back())) {
        if (!read) tryimg = one;  // keep the reason
        continue;
      }
      const bool via_map_files = f != files.back();
      if (!mem_id.empty() && !one.build_id.empty() && one.build_id != mem_id) {
        mismatch = fmt::format("{} on disk is build-id {}, not the mapped build-id {} (replaced after the process "
                               "loaded it)", p, one.build_id, mem_id);
        continue;
      }
      if (mem_id.empty() && deleted && !via_map_files) {
        mismatch = fmt::format("{} was deleted or replaced after the process loaded it, and neither the mapped file "
                               "(/proc/PID/map_files needs CAP_SYS_ADMIN) nor its build-id in memory could be read",
                               p);
        continue;
      }
      tryimg = std::move(one);
      read = true;
      break;
    }
    if (!read && !mismatch.empty()) {
      // Never read another build's version, symbols or DWARF for this code.
      NcclImage wrong;
      wrong.found = true;
      wrong.path = m->path;
      wrong.static_link = !is_libnccl(p);
      wrong.memory_build_id = mem_id;
      wrong.build_id = mem_id;
      wrong.mismatch = mismatch;
      if (!wrong.static_link) return wrong;
      continue;
    }
    if (!tryimg.static_link || (read && tryimg.version)) {
      tryimg.found = true;
      if (read && !tryimg.version)
        tryimg.why_not = "no \"NCCL version\" string in " + p;
      return tryimg;
    }
  }
  img.why_not = "no mapped library carries an \"NCCL version\" string";
  return img;
}

}  // namespace ccdiag::nccl::attach
