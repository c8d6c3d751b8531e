// Fuzzes the bundle reader on what a hostile bundle controls: the text of
// manifest.json and evidence.json (depth, types, sizes) and the members of a
// tarball (names, types, sizes, duplicates). The first byte picks the part.
// Invariants: no crash, no exception, nothing written outside the private
// extraction directory, which is always removed.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "bundle/bundle.hpp"
#include "bundle/bundle_tar.hpp"
#include "sys/output_dir.hpp"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ccdiag;
  if (size < 1) return 0;
  const uint8_t part = data[0] % 3;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (part == 0) {
    (void)parse_bundle_manifest(text, "manifest.json");
  } else if (part == 1) {
    std::vector<Evidence> ev;
    std::vector<Unchecked> un;
    (void)parse_bundle_evidence(text, "host", "evidence.json", ev, un);
  } else {
    // Tar members: the bytes as a .tar (or .tar.gz) file, extracted into a
    // private directory with small caps so the fuzzer cannot fill the disk.
    static const std::string scratch = [] {
      std::string t = (fs::temp_directory_path() / "ccdiag-fuzz-XXXXXX").string();
      if (!::mkdtemp(t.data())) std::abort();
      return t;
    }();
    const std::string tar = scratch + "/in.tar";
    {
      FILE* f = std::fopen(tar.c_str(), "wb");
      if (!f) std::abort();
      std::fwrite(text.data(), 1, text.size(), f);
      std::fclose(f);
    }
    const std::string out = scratch + "/out";
    {
      auto dir = OutputDir::open_fresh(out);
      if (!dir) std::abort();
      TarLimits limits;
      limits.max_members = 64;
      limits.max_bytes = 1 << 20;
      (void)extract_tar_into(tar, *dir, data[0] & 4, limits);
    }
    // Everything extracted stays under `out`: a member that escaped would
    // show up next to it.
    for (const auto& e : fs::directory_iterator(scratch))
      if (e.path() != tar && e.path() != out) std::abort();
    std::error_code ec;
    fs::remove_all(out, ec);
  }
  return 0;
}
