// Bundles: one host's evidence, portable (docs/bundle-format.md).
//
//   <bundle>/manifest.json   {"format":"ccdiag-bundle","schema_version":1,"ccdiag_version",
//                             "host","kernel","time","collectors":[...]}
//   <bundle>/evidence.json   {"evidence":[...],"unchecked":[...]}   (live-only observations)
//   <bundle>/raw/...         artefacts findings are derived from at diagnose time:
//                            raw/kernel.log, raw/logs/**, raw/fr/**, raw/nccl/** ...
//
// Findings are not stored: diagnose re-derives them from raw/, so a newer
// ccdiag gives a better answer on an old bundle. A bundle may also be a
// .tar.gz / .tgz / .tar of such a directory.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccdiag/evidence_set.hpp"
#include "ccdiag/result.hpp"
#include "sys/output_dir.hpp"

namespace ccdiag {

inline constexpr const char* kBundleFormat = "ccdiag-bundle";

struct BundleManifest {
  int schema_version = 0;
  std::string ccdiag_version;
  std::string host;
  std::string kernel;
  std::string time;
  nlohmann::json raw = nlohmann::json::object();
};

// A temporary directory removed when the last owner goes (tarball extraction,
// a live diagnose's bundle), and by the cleanup process when ccdiag is killed
// first (sys/temp_cleanup.hpp).
struct TempDir {
  explicit TempDir(std::string p);
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  std::string path;
};

struct Bundle {
  std::string input;              // what the user passed
  std::string dir;                // directory read (the extraction dir for tarballs)
  BundleManifest manifest;
  std::vector<Evidence> evidence;
  std::vector<Unchecked> unchecked;
  std::vector<std::string> raw_files;  // paths relative to dir, under raw/, regular files only
  std::shared_ptr<TempDir> temp;       // set for tarballs
};

// Reads and validates a bundle. Refuses, with a one-line error naming the
// file: a missing, malformed, oversized (manifest 1 MiB, evidence 256 MiB) or
// too deeply nested (64) manifest/evidence, one that is not a regular file
// (FIFO, device, symlink), a wrong format, a symlink or path that leads
// outside the bundle (a `raw` that is itself a symlink), tar members with
// absolute or ".." paths, links, devices or duplicate names, a tar past the
// member-count or expanded-size caps or the run's deadline (--timeout).
// What exists but cannot be read (an unreadable raw/ or raw/logs/, a FIFO
// under raw/) becomes an `unchecked` entry: it lowers confidence instead of
// reading as health.
Result<Bundle> read_bundle(const std::string& path);

// The checks read_bundle applies to the text of manifest.json and
// evidence.json (fuzz/bundle_reader_fuzz.cpp feeds them arbitrary bytes).
Result<BundleManifest> parse_bundle_manifest(std::string_view text, const std::string& shown);
Status parse_bundle_evidence(std::string_view text, const std::string& host, const std::string& shown,
                             std::vector<Evidence>& evidence, std::vector<Unchecked>& unchecked);

// A raw text artefact (raw/kernel.log): its newest 8 MiB, never read whole,
// through the bounded reader. `cut` (optional) says older bytes were dropped.
Result<std::string> read_bundle_raw_text(const Bundle& b, const std::string& rel, bool* cut = nullptr);

// True when `path` looks like a bundle (a manifest.json, or a tarball name).
bool looks_like_bundle(const std::string& path);

struct BundleWriteRequest {
  BundleManifest manifest;
  std::vector<Evidence> evidence;
  std::vector<Unchecked> unchecked;
  // raw artefacts: path under raw/ -> contents
  std::vector<std::pair<std::string, std::string>> raw;
};

// Writes the bundle into `dir` (a fresh directory: nothing in it is
// overwritten or followed).
Status write_bundle(const OutputDir& dir, const BundleWriteRequest& req);

}  // namespace ccdiag
