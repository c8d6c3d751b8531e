// Bundles: one host's evidence, portable (design.md §3).
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
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/evidence_set.hpp"
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

// A temporary directory removed when the last owner goes (tarball extraction).
struct TempDir {
  std::string path;
  ~TempDir();
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
// file: a missing or malformed manifest/evidence, a wrong format, a symlink or
// path that leads outside the bundle, tar members with absolute or ".." paths,
// links or devices.
Result<Bundle> read_bundle(const std::string& path);

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
