#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bundle/bundle.hpp"
#include "bundle/bundle_tar.hpp"

namespace fs = std::filesystem;

namespace ccdiag {

TempDir::~TempDir() {
  if (path.empty()) return;
  std::error_code ec;
  fs::remove_all(path, ec);
}

namespace {

constexpr size_t kMaxJsonBytes = 512ULL << 20;

bool has_suffix(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

bool is_tarball_name(const std::string& p) {
  return has_suffix(p, ".tar.gz") || has_suffix(p, ".tgz") || has_suffix(p, ".tar");
}

Result<std::string> slurp(const std::string& path, const std::string& shown) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(std::string("cannot read: ") + std::strerror(errno), shown);
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > kMaxJsonBytes) return make_error("file too large", shown);
  return s;
}

// A member name is safe when it is relative and never climbs out.
bool safe_member_name(const std::string& name) {
  if (name.empty() || name.front() == '/') return false;
  fs::path p(name);
  for (const auto& part : p)
    if (part == "..") return false;
  return true;
}

Result<std::shared_ptr<TempDir>> extract_tarball(const std::string& path) {
  char tmpl[] = "/tmp/ccdiag-bundle-XXXXXX";
  if (!::mkdtemp(tmpl)) return make_error(std::string("cannot create a temporary directory: ") + std::strerror(errno), path);
  auto temp = std::make_shared<TempDir>();
  temp->path = tmpl;

  struct archive* a = archive_read_new();
  archive_read_support_filter_gzip(a);
  archive_read_support_filter_none(a);
  archive_read_support_format_tar(a);
  archive_read_support_format_gnutar(a);
  auto fail = [&](const std::string& msg) -> Error {
    archive_read_free(a);
    return make_error(msg, path, "pass a bundle written by `ccdiag collect` (a directory or its .tar.gz)");
  };
  if (archive_read_open_filename(a, path.c_str(), 1 << 16) != ARCHIVE_OK)
    return fail(std::string("not a readable tar archive: ") + archive_error_string(a));
  uint64_t total = 0;
  archive_entry* entry = nullptr;
  for (;;) {
    const int r = archive_read_next_header(a, &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK) return fail(std::string("corrupt tar archive: ") + archive_error_string(a));
    std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    while (name.rfind("./", 0) == 0) name.erase(0, 2);
    if (name.empty()) continue;
    if (!safe_member_name(name)) return fail("member '" + name + "' has an absolute or '..' path; refused");
    const mode_t type = archive_entry_filetype(entry);
    if (archive_entry_hardlink(entry) || type == AE_IFLNK)
      return fail("member '" + name + "' is a link; refused (bundles hold plain files only)");
    const fs::path dest = fs::path(temp->path) / name;
    std::error_code ec;
    if (type == AE_IFDIR) {
      fs::create_directories(dest, ec);
      continue;
    }
    if (type != AE_IFREG) return fail("member '" + name + "' is not a regular file; refused");
    fs::create_directories(dest.parent_path(), ec);
    std::ofstream out(dest, std::ios::binary);
    if (!out) return fail("cannot write extracted member '" + name + "'");
    if (auto why = copy_member_data(a, out, total); !why.empty()) return fail(why);
  }
  archive_read_free(a);
  return temp;
}

// The bundle root inside an extracted archive: the directory holding
// manifest.json (the archive root or its single top-level directory).
std::string find_root(const std::string& dir) {
  if (fs::exists(fs::path(dir) / "manifest.json")) return dir;
  std::error_code ec;
  std::string only;
  int count = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    ++count;
    if (e.is_directory()) only = e.path().string();
  }
  if (count == 1 && !only.empty() && fs::exists(fs::path(only) / "manifest.json")) return only;
  return dir;
}

Result<nlohmann::json> read_json_file(const std::string& path, const std::string& shown) {
  auto text = slurp(path, shown);
  if (!text) return text.error();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return make_error("malformed JSON", shown, "the file is damaged; collect the bundle again");
  return j;
}

// Collects regular files under raw/, refusing any symlink whose target leaves the bundle.
Status list_raw(const std::string& dir, std::vector<std::string>& out, const std::string& input) {
  const fs::path raw = fs::path(dir) / "raw";
  std::error_code ec;
  if (!fs::exists(raw, ec)) return Ok{};
  const fs::path canon_root = fs::weakly_canonical(dir, ec);
  for (auto it = fs::recursive_directory_iterator(raw, fs::directory_options::none, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return make_error("cannot list raw/: " + ec.message(), input);
    const fs::path p = it->path();
    const std::string rel = fs::relative(p, dir, ec).string();
    if (it->is_symlink(ec)) {
      const fs::path target = fs::weakly_canonical(p, ec);
      const std::string t = target.string(), r = canon_root.string() + "/";
      if (t.compare(0, r.size(), r) != 0)
        return make_error("symlink points outside the bundle; refused", input + "/" + rel);
      if (fs::is_directory(target, ec)) continue;  // not followed: the directory is listed on its own
    }
    if (fs::is_regular_file(p, ec)) out.push_back(rel);
  }
  std::sort(out.begin(), out.end());
  return Ok{};
}

}  // namespace

bool looks_like_bundle(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return fs::exists(fs::path(path) / "manifest.json", ec);
  return is_tarball_name(path);
}

Result<Bundle> read_bundle(const std::string& input) {
  Bundle b;
  b.input = input;
  std::error_code ec;
  if (!fs::exists(input, ec)) return make_error("no such bundle", input);
  if (fs::is_directory(input, ec)) {
    b.dir = input;
  } else if (fs::is_regular_file(input, ec)) {
    auto t = extract_tarball(input);
    if (!t) return t.error();
    b.temp = *t;
    b.dir = find_root(b.temp->path);
  } else {
    return make_error("not a directory or a tarball", input);
  }
  auto shown = [&](const char* f) { return input + "/" + f; };

  // manifest.json and evidence.json must be regular files inside the bundle.
  for (const char* f : {"manifest.json", "evidence.json"}) {
    const fs::path p = fs::path(b.dir) / f;
    if (fs::is_symlink(p, ec)) return make_error("is a symlink; refused", shown(f));
    if (!fs::exists(p, ec))
      return make_error("missing", shown(f), "not a ccdiag bundle; create one with `ccdiag collect --out DIR`");
  }
  auto mj = read_json_file((fs::path(b.dir) / "manifest.json").string(), shown("manifest.json"));
  if (!mj) return mj.error();
  const auto& m = *mj;
  if (!m.is_object() || m.value("format", "") != kBundleFormat)
    return make_error("not a ccdiag bundle manifest (format must be \"ccdiag-bundle\")", shown("manifest.json"));
  if (!m.contains("schema_version") || !m["schema_version"].is_number_integer())
    return make_error("schema_version missing or not an integer", shown("manifest.json"));
  b.manifest.schema_version = m["schema_version"].get<int>();
  if (b.manifest.schema_version < 1 || b.manifest.schema_version > kSchemaVersion)
    return make_error("unsupported schema_version " + std::to_string(b.manifest.schema_version), shown("manifest.json"),
                      "this ccdiag reads schema_version 1.." + std::to_string(kSchemaVersion) + "; upgrade ccdiag");
  if (!m.contains("host") || !m["host"].is_string() || m["host"].get<std::string>().empty())
    return make_error("host missing", shown("manifest.json"));
  b.manifest.host = m["host"].get<std::string>();
  b.manifest.ccdiag_version = m.value("ccdiag_version", "");
  b.manifest.kernel = m.value("kernel", "");
  b.manifest.time = m.value("time", "");
  b.manifest.raw = m;

  auto ej = read_json_file((fs::path(b.dir) / "evidence.json").string(), shown("evidence.json"));
  if (!ej) return ej.error();
  if (!ej->is_object() || !(*ej).contains("evidence") || !(*ej)["evidence"].is_array())
    return make_error("expected an object with an \"evidence\" array", shown("evidence.json"));
  size_t index = 0;
  for (const auto& item : (*ej)["evidence"]) {
    if (!item.is_object() || !item.contains("kind") || !item["kind"].is_string())
      return make_error("evidence[" + std::to_string(index) + "] has no \"kind\"", shown("evidence.json"));
    Evidence e;
    try {
      e = item.get<Evidence>();
    } catch (const nlohmann::json::exception& ex) {
      return make_error("evidence[" + std::to_string(index) + "]: " + ex.what(), shown("evidence.json"));
    }
    if (!e.subject.host) e.subject.host = b.manifest.host;
    b.evidence.push_back(std::move(e));
    ++index;
  }
  if (ej->contains("unchecked") && (*ej)["unchecked"].is_array()) {
    for (const auto& u : (*ej)["unchecked"])
      if (u.is_object())
        b.unchecked.push_back(Unchecked{b.manifest.host + ": " + u.value("what", "?"), u.value("reason", "")});
  }
  if (auto st = list_raw(b.dir, b.raw_files, input); !st) return st.error();
  return b;
}

}  // namespace ccdiag
