// Bundles as tar streams, for fan-out (`ccdiag collect --tar`): the launcher
// (pdsh, clush, srun, kubectl exec) carries each host's stdout back, so the
// bundle travels without a second copy step or a file left on the node.
//
//   raw       gzip-compressed ustar, members under "<top>/" (manifest.json,
//             evidence.json, raw/...): for `ssh host ccdiag collect --tar > h.tgz`
//             and per-host output files (srun -o %N, kubectl exec).
//   armoured  the same bytes in base64, 76 characters a line, between
//             "CCDIAG-BUNDLE-TAR-BEGIN 1 <top>" and "CCDIAG-BUNDLE-TAR-END <bytes>"
//             lines: survives line-oriented gatherers that prefix every line
//             with "host: " (pdsh, clush); a missing END line means the stream
//             was cut (a timeout, a killed ssh).
//
// Reading refuses what read_bundle refuses: absolute or ".." member paths,
// links, devices, duplicate members, more than 10,000 members or 4 GiB expanded.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

#include "ccdiag/result.hpp"
#include "sys/output_dir.hpp"

struct archive;
struct archive_entry;

namespace ccdiag {

// A bundle is logs and JSON, not a disk image: extraction refuses more. Both
// caps are checked from each member's header before its data is written (a
// 42 MB tar.gz holding one 9 GiB member is refused without writing a byte;
// one holding 1,000,000 empty members stops at the count).
inline constexpr uint64_t kMaxBundleExpandedBytes = 4ULL << 30;
inline constexpr uint64_t kMaxBundleMembers = 10000;

struct TarLimits {
  uint64_t max_members = kMaxBundleMembers;
  uint64_t max_bytes = kMaxBundleExpandedBytes;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// What extraction has used so far.
struct TarBudget {
  uint64_t members = 0;
  uint64_t bytes = 0;
  // "" when the member whose header is `entry` fits, else why it is refused.
  std::string admit(struct archive_entry* entry, const TarLimits& limits);
};

// Copies the data of the archive's current member to `fd`, never past the
// size its header announced nor past the limits. Returns "" or why it stopped.
std::string copy_member_data(struct archive* a, int fd, TarBudget& budget, const TarLimits& limits);

// Extracts the tar or tar.gz file `tar_path` into `dest`: every file created
// O_EXCL|O_NOFOLLOW under the directory's descriptor (a duplicate member is
// refused, a planted symlink never followed); absolute, '..', link and device
// members refused; limits checked before writing. `strip_top` drops the first
// component of every member ("<host>/manifest.json" -> "manifest.json").
Status extract_tar_into(const std::string& tar_path, const OutputDir& dest, bool strip_top, const TarLimits& limits);

inline constexpr const char* kArmorBegin = "CCDIAG-BUNDLE-TAR-BEGIN";
inline constexpr const char* kArmorEnd = "CCDIAG-BUNDLE-TAR-END";

// Writes the bundle directory `dir` to `fd` as a tar.gz stream (armoured when
// `armor`), every member under `top/`. Regular files and directories only.
Status write_bundle_tar(const std::string& dir, const std::string& top, int fd, bool armor);

// Extracts a tar or tar.gz file into `dest` (a new directory, see
// OutputDir::open_fresh), dropping the single top-level directory of the
// members, with the safety rules above and the run's deadline.
Status extract_bundle_tar(const std::string& tar_path, const std::string& dest);

}  // namespace ccdiag
