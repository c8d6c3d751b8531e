#include <filesystem>
#include <fstream>

#include "bundle/bundle.hpp"

namespace fs = std::filesystem;

namespace ccdiag {

namespace {
Status write_file(const fs::path& p, const std::string& content) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec) return make_error("cannot create directory: " + ec.message(), p.parent_path().string());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  if (!out) return make_error("cannot write", p.string(), "check that --out is writable");
  out << content;
  if (!out) return make_error("write failed", p.string());
  return Ok{};
}
}  // namespace

Status write_bundle(const BundleWriteRequest& req) {
  const fs::path root(req.out_dir);
  nlohmann::json manifest = req.manifest.raw.is_object() ? req.manifest.raw : nlohmann::json::object();
  manifest["format"] = kBundleFormat;
  manifest["schema_version"] = kSchemaVersion;
  manifest["ccdiag_version"] = req.manifest.ccdiag_version;
  manifest["host"] = req.manifest.host;
  manifest["kernel"] = req.manifest.kernel;
  manifest["time"] = req.manifest.time;
  nlohmann::json ev{{"evidence", req.evidence}, {"unchecked", nlohmann::json::array()}};
  for (const auto& u : req.unchecked) ev["unchecked"].push_back(u);
  if (auto s = write_file(root / "manifest.json", manifest.dump(2) + "\n"); !s) return s;
  if (auto s = write_file(root / "evidence.json", ev.dump(2) + "\n"); !s) return s;
  for (const auto& [rel, content] : req.raw) {
    if (rel.empty() || rel.front() == '/' || rel.find("..") != std::string::npos)
      return make_error("refusing raw artefact path", rel);
    if (auto s = write_file(root / "raw" / rel, content); !s) return s;
  }
  return Ok{};
}

}  // namespace ccdiag
