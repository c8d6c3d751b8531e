#include "collectors/nccl/attach/nccl_image.hpp"

#include <algorithm>
#include <set>

#include "sys/elf_view.hpp"

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

bool fill_from_file(NcclImage& img, const std::string& file, uint64_t mapping_start, uint64_t mapping_offset) {
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
  img.has_debug_info = elf->section(".debug_info").has_value();
  // The mapping with file offset 0 starts at the load base (+ first p_vaddr).
  if (mapping_offset == 0) img.load_base = mapping_start - elf->first_load_vaddr();
  if (auto v = elf->symbol("ncclComms")) img.ras_comms_addr = img.load_base + *v;
  if (auto v = elf->symbol("nNcclComms")) img.ras_ncomms_addr = img.load_base + *v;
  return true;
}

}  // namespace

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
    fill_from_file(img, override_path, nccl ? nccl->start : 0, nccl ? nccl->offset : 1);
    return img;
  }
  for (const auto* m : candidates) {
    const std::string p = strip_deleted(m->path);
    NcclImage tryimg;
    tryimg.path = m->path;
    tryimg.static_link = !is_libnccl(p);
    const bool read = fill_from_file(tryimg, t.file_prefix + p, m->start, m->offset);
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
