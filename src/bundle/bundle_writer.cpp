#include "bundle/bundle.hpp"

#include "ccdiag/utf8.hpp"

namespace ccdiag {

// Every file goes through OutputDir: O_EXCL|O_NOFOLLOW relative to the
// directory's descriptor, so a planted name is refused, never followed.
Status write_bundle(const OutputDir& dir, const BundleWriteRequest& req) {
  nlohmann::json manifest = req.manifest.raw.is_object() ? req.manifest.raw : nlohmann::json::object();
  manifest["format"] = kBundleFormat;
  manifest["schema_version"] = kSchemaVersion;
  manifest["ccdiag_version"] = req.manifest.ccdiag_version;
  manifest["host"] = req.manifest.host;
  manifest["kernel"] = req.manifest.kernel;
  manifest["time"] = req.manifest.time;
  nlohmann::json ev{{"evidence", req.evidence}, {"unchecked", nlohmann::json::array()}};
  for (const auto& u : req.unchecked) ev["unchecked"].push_back(u);
  if (auto s = dir.write_file("manifest.json", json_text(manifest) + "\n"); !s) return s;
  if (auto s = dir.write_file("evidence.json", json_text(ev) + "\n"); !s) return s;
  for (const auto& [rel, content] : req.raw)
    if (auto s = dir.write_file("raw/" + rel, content); !s) return s;
  return Ok{};
}

}  // namespace ccdiag
