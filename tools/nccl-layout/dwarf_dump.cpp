// ccdiag-nccl-layout: prints what ccdiag itself reads from a libnccl, for
// gen.py (tools/nccl-layout) and for checking a new release by hand.
//   ccdiag-nccl-layout dwarf LIB     the layout keys found in LIB's DWARF (JSON row)
//   ccdiag-nccl-layout version LIB   the "NCCL version" string embedded in LIB
// Exit codes: 0 ok, 2 unreadable file / no DWARF / no version string.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "collectors/nccl/attach/layout.hpp"

namespace na = ccdiag::nccl::attach;

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "dwarf" && std::string(argv[1]) != "version")) {
    std::fprintf(stderr, "usage: %s dwarf|version LIB\n", argv[0]);
    return 2;
  }
  const std::string path = argv[2];
  std::optional<na::NcclVersion> ver;
  {
    // The version string sits in .rodata; map the whole file rather than
    // copying a 200+ MB library.
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0) {
      std::fprintf(stderr, "ccdiag-nccl-layout: error: %s: %s\n", path.c_str(), std::strerror(errno));
      if (fd >= 0) close(fd);
      return 2;
    }
    const size_t size = static_cast<size_t>(st.st_size);
    void* m = size ? mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (m != MAP_FAILED) {
      ver = na::parse_nccl_version_string(std::string_view(static_cast<const char*>(m), size));
      munmap(m, size);
    }
  }
  if (std::string(argv[1]) == "version") {
    if (!ver) {
      std::fprintf(stderr, "ccdiag-nccl-layout: error: %s: no \"NCCL version\" string\n", path.c_str());
      return 2;
    }
    std::printf("%s%s\n", ver->str().c_str(),
                ver->cuda_major >= 0 ? ("+cuda" + std::to_string(ver->cuda_major) + "." +
                                        std::to_string(ver->cuda_minor)).c_str()
                                     : "");
    return 0;
  }
  auto layout = na::dwarf_layout(path);
  if (!layout) {
    std::fprintf(stderr, "ccdiag-nccl-layout: error: %s\n", layout.error().one_line().c_str());
    return 2;
  }
  nlohmann::ordered_json row;
  const std::string v = ver ? ver->str() : "unknown";
  row["label"] = v;
  row["versions"] = ver ? nlohmann::ordered_json::array({v}) : nlohmann::ordered_json::array();
  row["arch"] = "x86_64";
  row["cuda_ge_11_3"] = ver ? ver->cuda_ge_11_3() : true;
  row["source"] = "DWARF of the shipped library";
  nlohmann::ordered_json fields = nlohmann::ordered_json::object();
  for (const auto& key : na::layout_field_keys())
    if (auto off = layout->get(key)) fields[key] = *off;
  row["fields"] = fields;
  std::printf("%s\n", row.dump(2).c_str());
  return 0;
}
