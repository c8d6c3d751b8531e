#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "bundle/bundle.hpp"
#include "bundle/bundle_tar.hpp"
#include "sys/run_deadline.hpp"
#include "sys/temp_cleanup.hpp"
#include "sys/untrusted_file.hpp"

namespace fs = std::filesystem;

namespace ccdiag {

TempDir::TempDir(std::string p) : path(std::move(p)) { register_temp_dir(path); }

TempDir::~TempDir() {
  if (path.empty()) return;
  std::error_code ec;
  fs::remove_all(path, ec);
  unregister_temp_dir(path);
}

namespace {

// manifest.json is a few hundred bytes; evidence.json holds every rank's
// stacks (a few MB for 8 ranks). The caps keep a hostile file from turning
// into gigabytes of JSON nodes (nlohmann uses ~10x the text size).
constexpr uint64_t kMaxManifestBytes = 1ULL << 20;
constexpr uint64_t kMaxEvidenceBytes = 256ULL << 20;
// raw/kernel.log as collected is at most 8 MiB (the newest part of the ring):
// a bigger one was not written by ccdiag; its newest 8 MiB are analysed.
constexpr uint64_t kMaxKernelLogBytes = 8ULL << 20;

bool has_suffix(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

bool is_tarball_name(const std::string& p) {
  return has_suffix(p, ".tar.gz") || has_suffix(p, ".tgz") || has_suffix(p, ".tar");
}

Result<std::shared_ptr<TempDir>> extract_tarball(const std::string& path) {
  // Created and registered with termination signals deferred: removed however
  // this process ends, even by a signal that lands in between (sys/temp_cleanup.hpp).
  std::shared_ptr<TempDir> temp;
  Result<OutputDir> dir = make_error("not created");
  {
    TerminationSignalsDeferred deferred;
    dir = OutputDir::make_private("ccdiag-bundle-");
    if (!dir) return make_error("cannot create a temporary directory: " + dir.error().message, path);
    temp = std::make_shared<TempDir>(dir->path());
  }
  TarLimits limits;
  limits.deadline = run_deadline();
  if (auto st = extract_tar_into(path, *dir, /*strip_top=*/false, limits); !st) return st.error();
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

Result<nlohmann::json> parse_json_text(std::string_view text, const std::string& shown) {
  auto j = parse_untrusted_json(text, shown);
  if (!j) {
    if (j.error().message == "malformed JSON")
      return make_error("malformed JSON", shown, "the file is damaged; collect the bundle again");
    return j.error();
  }
  return j;
}

// Walks raw/ through directory descriptors opened O_NOFOLLOW, so nothing
// outside the bundle is ever opened, listed or named in a message. What
// cannot be read becomes an `unchecked` entry: evidence that was there but
// could not be looked at must lower confidence, never read as health.
struct RawWalk {
  const std::string& input;
  const std::string& host;
  std::string canon_root;  // the bundle directory, resolved, with a trailing '/'
  std::vector<std::string>& files;
  std::vector<Unchecked>& unchecked;
  size_t entries = 0;

  void note(const std::string& rel, const std::string& why) {
    unchecked.push_back(Unchecked{host + ": bundle " + rel, UncheckedState::error, why + "; its evidence was not read"});
  }

  // A symlink is refused when its target leaves the bundle (the message names
  // the link, never the target); one inside the bundle is skipped: bundles
  // hold plain files, and the target is listed on its own.
  Status symlink(const std::string& full, const std::string& rel) {
    std::error_code ec;
    const std::string t = fs::weakly_canonical(full, ec).string();
    if (ec || t.compare(0, canon_root.size(), canon_root) != 0)
      return make_error("symlink points outside the bundle; refused", input + "/" + rel);
    return Ok{};
  }

  Status walk(int dirfd, const std::string& full, const std::string& rel, int depth) {
    if (depth > 32) {
      note(rel, "nested deeper than 32 directories");
      return Ok{};
    }
    const int dup_fd = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    DIR* d = dup_fd >= 0 ? ::fdopendir(dup_fd) : nullptr;
    if (!d) {
      if (dup_fd >= 0) ::close(dup_fd);
      note(rel + "/", std::string("cannot list: ") + std::strerror(errno));
      return Ok{};
    }
    std::vector<std::string> names;
    errno = 0;
    while (const dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      names.emplace_back(e->d_name);
    }
    const int read_err = errno;
    ::closedir(d);
    if (read_err != 0) note(rel + "/", std::string("cannot list: ") + std::strerror(read_err));
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
      if (++entries > kMaxBundleMembers)
        return make_error("more than " + std::to_string(kMaxBundleMembers) + " files under raw/; refused", input);
      const std::string r = rel + "/" + n, f = full + "/" + n;
      struct stat st {};
      if (::fstatat(dirfd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        note(r, std::string("cannot stat: ") + std::strerror(errno));
        continue;
      }
      if (S_ISLNK(st.st_mode)) {
        if (auto s = symlink(f, r); !s) return s;
        continue;
      }
      if (S_ISDIR(st.st_mode)) {
        const int sub = ::openat(dirfd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) {
          note(r + "/", std::string("cannot open: ") + std::strerror(errno));
          continue;
        }
        auto s = walk(sub, f, r, depth + 1);
        ::close(sub);
        if (!s) return s;
        continue;
      }
      if (!S_ISREG(st.st_mode)) {
        note(r, "not a regular file (a FIFO, socket or device); skipped");
        continue;
      }
      if (::faccessat(dirfd, n.c_str(), R_OK, AT_SYMLINK_NOFOLLOW | AT_EACCESS) != 0 && errno == EACCES) {
        note(r, "unreadable (permission denied)");
        continue;
      }
      files.push_back(r);
    }
    return Ok{};
  }
};

Status list_raw(const std::string& dir, const std::string& host, std::vector<std::string>& out,
                std::vector<Unchecked>& unchecked, const std::string& input) {
  const int root = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return make_error(std::string("cannot open: ") + std::strerror(errno), input);
  struct stat st {};
  if (::fstatat(root, "raw", &st, AT_SYMLINK_NOFOLLOW) != 0) {
    const int err = errno;
    ::close(root);
    if (err == ENOENT) return Ok{};  // a bundle of live-only evidence
    unchecked.push_back(Unchecked{host + ": bundle raw/", UncheckedState::error, std::string("cannot stat: ") + std::strerror(err)});
    return Ok{};
  }
  // raw itself a symlink: the whole tree would be someone else's directory.
  if (S_ISLNK(st.st_mode)) {
    ::close(root);
    return make_error("raw is a symlink; refused (bundles hold plain files and directories)", input + "/raw");
  }
  if (!S_ISDIR(st.st_mode)) {
    ::close(root);
    return make_error("raw is not a directory; refused", input + "/raw");
  }
  const int raw = ::openat(root, "raw", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  ::close(root);
  if (raw < 0) {
    unchecked.push_back(Unchecked{host + ": bundle raw/", UncheckedState::error, std::string("cannot open: ") + std::strerror(errno) +
                                                               "; its evidence was not read"});
    return Ok{};
  }
  std::error_code ec;
  RawWalk w{input, host, fs::weakly_canonical(dir, ec).string() + "/", out, unchecked};
  auto s = w.walk(raw, (fs::path(dir) / "raw").string(), "raw", 0);
  ::close(raw);
  std::sort(out.begin(), out.end());
  return s;
}

}  // namespace

Result<std::string> read_bundle_raw_text(const Bundle& b, const std::string& rel, bool* cut) {
  const std::string path = (fs::path(b.dir) / rel).string();
  auto t = read_untrusted_tail(path, kMaxKernelLogBytes, b.input + "/" + rel);
  if (!t) return t.error();
  if (cut) *cut = t->cut;
  return std::move(t->text);
}

bool looks_like_bundle(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return fs::exists(fs::path(path) / "manifest.json", ec);
  return is_tarball_name(path);
}

Result<BundleManifest> parse_bundle_manifest(std::string_view text, const std::string& shown) {
  auto mj = parse_json_text(text, shown);
  if (!mj) return mj.error();
  const auto& m = *mj;
  BundleManifest out;
  // value("format", "") would throw on a non-string: typed checks only.
  if (!m.is_object() || !m.contains("format") || !m["format"].is_string() || m["format"].get<std::string>() != kBundleFormat)
    return make_error("not a ccdiag bundle manifest (format must be \"ccdiag-bundle\")", shown);
  if (!m.contains("schema_version") || !m["schema_version"].is_number_integer())
    return make_error("schema_version missing or not an integer", shown);
  const auto v = m["schema_version"].get<int64_t>();
  if (v < 1 || v > kSchemaVersion)
    return make_error("unsupported schema_version " + std::to_string(v), shown,
                      "this ccdiag reads schema_version 1.." + std::to_string(kSchemaVersion) + "; upgrade ccdiag");
  out.schema_version = static_cast<int>(v);
  if (!m.contains("host") || !m["host"].is_string() || m["host"].get<std::string>().empty())
    return make_error("host missing", shown);
  out.host = m["host"].get<std::string>();
  auto str = [&](const char* k) { return m.contains(k) && m[k].is_string() ? m[k].get<std::string>() : std::string(); };
  out.ccdiag_version = str("ccdiag_version");
  out.kernel = str("kernel");
  out.time = str("time");
  out.raw = std::move(*mj);
  return out;
}

Status parse_bundle_evidence(std::string_view text, const std::string& host, const std::string& shown,
                             std::vector<Evidence>& evidence, std::vector<Unchecked>& unchecked) {
  auto ej = parse_json_text(text, shown);
  if (!ej) return ej.error();
  if (!ej->is_object() || !(*ej).contains("evidence") || !(*ej)["evidence"].is_array())
    return make_error("expected an object with an \"evidence\" array", shown);
  size_t index = 0;
  for (const auto& item : (*ej)["evidence"]) {
    if (!item.is_object() || !item.contains("kind") || !item["kind"].is_string())
      return make_error("evidence[" + std::to_string(index) + "] has no \"kind\"", shown);
    Evidence e;
    try {
      e = item.get<Evidence>();
    } catch (const nlohmann::json::exception& ex) {
      return make_error("evidence[" + std::to_string(index) + "]: " + ex.what(), shown);
    }
    if (!e.subject.host) e.subject.host = host;
    evidence.push_back(std::move(e));
    ++index;
  }
  if (ej->contains("unchecked") && (*ej)["unchecked"].is_array()) {
    for (const auto& u : (*ej)["unchecked"]) {
      if (!u.is_object()) continue;
      auto str = [&](const char* k, const char* dflt) {
        return u.contains(k) && u[k].is_string() ? u[k].get<std::string>() : std::string(dflt);
      };
      Unchecked c = unchecked_from_text(host + ": " + str("what", "?"), str("reason", ""));
      if (auto st = unchecked_state_from(str("state", ""))) {  // written by this version: the reason has no prefix
        c.state = *st;
        c.reason = str("reason", "");
      }
      unchecked.push_back(std::move(c));
    }
  }
  return Ok{};
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
  auto mtext = read_untrusted((fs::path(b.dir) / "manifest.json").string(), kMaxManifestBytes, shown("manifest.json"));
  if (!mtext) return mtext.error();
  auto m = parse_bundle_manifest(*mtext, shown("manifest.json"));
  if (!m) return m.error();
  b.manifest = std::move(*m);
  auto etext = read_untrusted((fs::path(b.dir) / "evidence.json").string(), kMaxEvidenceBytes, shown("evidence.json"));
  if (!etext) return etext.error();
  if (auto st = parse_bundle_evidence(*etext, b.manifest.host, shown("evidence.json"), b.evidence, b.unchecked); !st)
    return st.error();
  if (auto st = list_raw(b.dir, b.manifest.host, b.raw_files, b.unchecked, input); !st) return st.error();
  return b;
}

}  // namespace ccdiag
