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
// links, devices, more than 8 GiB expanded.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "ccdiag/result.hpp"

struct archive;

namespace ccdiag {

// A bundle is logs and JSON, not a disk image: extraction stops past this.
inline constexpr uint64_t kMaxBundleExpandedBytes = 8ULL << 30;

// Copies the data of the archive's current member to `out`, adding to
// `total`. Returns "" or why it stopped: a corrupt archive, or `total`
// passing kMaxBundleExpandedBytes.
std::string copy_member_data(struct archive* a, std::ostream& out, uint64_t& total);

inline constexpr const char* kArmorBegin = "CCDIAG-BUNDLE-TAR-BEGIN";
inline constexpr const char* kArmorEnd = "CCDIAG-BUNDLE-TAR-END";

// Writes the bundle directory `dir` to `fd` as a tar.gz stream (armoured when
// `armor`), every member under `top/`. Regular files and directories only.
Status write_bundle_tar(const std::string& dir, const std::string& top, int fd, bool armor);

// Extracts a tar or tar.gz file into `dest` (created if needed), dropping the
// single top-level directory of the members, with the safety rules above.
Status extract_bundle_tar(const std::string& tar_path, const std::string& dest);

}  // namespace ccdiag
