#include "bundle/bundle_tar.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "fleet/armor.hpp"

namespace fs = std::filesystem;

namespace ccdiag {

namespace {

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

struct Sink {
  int fd;
  bool armor;
  Base64LineEncoder enc;
  uint64_t bytes = 0;
  bool failed = false;
};

la_ssize_t sink_write(struct archive*, void* client, const void* buf, size_t n) {
  auto* s = static_cast<Sink*>(client);
  s->bytes += n;
  if (s->armor) {
    const std::string lines = s->enc.feed(std::string_view(static_cast<const char*>(buf), n));
    if (!write_all(s->fd, lines.data(), lines.size())) s->failed = true;
  } else if (!write_all(s->fd, static_cast<const char*>(buf), n)) {
    s->failed = true;
  }
  return s->failed ? -1 : static_cast<la_ssize_t>(n);
}

}  // namespace

Status write_bundle_tar(const std::string& dir, const std::string& top, int fd, bool armor) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return make_error("not a directory", dir);
  std::vector<fs::path> entries;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    entries.push_back(it->path());
  if (ec) return make_error("cannot list: " + ec.message(), dir);
  std::sort(entries.begin(), entries.end());  // deterministic member order

  Sink sink{fd, armor, {}, 0, false};
  if (armor) {
    const std::string begin = std::string(kArmorBegin) + " 1 " + top + "\n";
    if (!write_all(fd, begin.data(), begin.size())) return make_error(std::string("write failed: ") + std::strerror(errno), "stdout");
  }
  struct archive* a = archive_write_new();
  archive_write_add_filter_gzip(a);
  archive_write_set_format_pax_restricted(a);
  archive_write_set_bytes_in_last_block(a, 1);  // no padding to 10 KiB: streams stay small
  if (archive_write_open(a, &sink, nullptr, sink_write, nullptr) != ARCHIVE_OK) {
    const std::string msg = archive_error_string(a) ? archive_error_string(a) : "archive_write_open failed";
    archive_write_free(a);
    return make_error(msg, "tar stream");
  }
  auto fail = [&](const std::string& msg, const std::string& ctx) -> Error {
    archive_write_free(a);
    return make_error(msg, ctx);
  };
  archive_entry* e = archive_entry_new();
  // The top directory itself first, then every member.
  for (size_t i = 0; i <= entries.size(); ++i) {
    archive_entry_clear(e);
    struct stat st {};
    std::string name;
    fs::path p;
    if (i == 0) {
      if (::stat(dir.c_str(), &st) != 0) return fail(std::strerror(errno), dir);
      name = top;
    } else {
      p = entries[i - 1];
      if (::lstat(p.c_str(), &st) != 0) return fail(std::strerror(errno), p.string());
      name = top + "/" + fs::relative(p, dir, ec).string();
    }
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) continue;  // bundles hold plain files only
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_filetype(e, S_ISDIR(st.st_mode) ? AE_IFDIR : AE_IFREG);
    archive_entry_set_perm(e, S_ISDIR(st.st_mode) ? 0755 : 0644);
    archive_entry_set_mtime(e, st.st_mtime, 0);
    archive_entry_set_size(e, S_ISREG(st.st_mode) ? st.st_size : 0);
    if (archive_write_header(a, e) != ARCHIVE_OK) {
      archive_entry_free(e);
      return fail(archive_error_string(a) ? archive_error_string(a) : "cannot write tar header", name);
    }
    if (S_ISREG(st.st_mode)) {
      std::ifstream in(p, std::ios::binary);
      if (!in) {
        archive_entry_free(e);
        return fail("cannot read", p.string());
      }
      char buf[1 << 16];
      int64_t left = st.st_size;  // never more than the header announced
      while (left > 0 && in) {
        in.read(buf, std::min<int64_t>(sizeof buf, left));
        const auto got = in.gcount();
        if (got <= 0) break;
        if (archive_write_data(a, buf, static_cast<size_t>(got)) < 0) {
          archive_entry_free(e);
          return fail(archive_error_string(a) ? archive_error_string(a) : "write failed", name);
        }
        left -= got;
      }
    }
  }
  archive_entry_free(e);
  if (archive_write_close(a) != ARCHIVE_OK || sink.failed) {
    const std::string msg = sink.failed ? std::string("write failed: ") + std::strerror(errno) : archive_error_string(a);
    archive_write_free(a);
    return make_error(msg, "tar stream");
  }
  archive_write_free(a);
  if (armor) {
    const std::string tail = sink.enc.finish() + kArmorEnd + " " + std::to_string(sink.bytes) + "\n";
    if (!write_all(fd, tail.data(), tail.size())) return make_error(std::string("write failed: ") + std::strerror(errno), "stdout");
  }
  return Ok{};
}

std::string copy_member_data(struct archive* a, std::ostream& out, uint64_t& total) {
  const void* buf;
  size_t size;
  la_int64_t offset;
  for (;;) {
    const int rb = archive_read_data_block(a, &buf, &size, &offset);
    if (rb == ARCHIVE_EOF) return "";
    if (rb != ARCHIVE_OK) return std::string("corrupt tar archive: ") + archive_error_string(a);
    total += size;
    if (total > kMaxBundleExpandedBytes) return "archive expands beyond 8 GiB; refused";
    out.write(static_cast<const char*>(buf), static_cast<std::streamsize>(size));
  }
}

Status extract_bundle_tar(const std::string& tar_path, const std::string& dest) {
  struct archive* a = archive_read_new();
  archive_read_support_filter_gzip(a);
  archive_read_support_filter_none(a);
  archive_read_support_format_tar(a);
  archive_read_support_format_gnutar(a);
  auto fail = [&](const std::string& msg) -> Error {
    archive_read_free(a);
    return make_error(msg, tar_path);
  };
  if (archive_read_open_filename(a, tar_path.c_str(), 1 << 16) != ARCHIVE_OK)
    return fail(std::string("not a readable tar stream: ") + archive_error_string(a));
  std::error_code ec;
  fs::create_directories(dest, ec);
  if (ec) return fail("cannot create " + dest + ": " + ec.message());
  uint64_t total = 0;
  size_t files = 0;
  archive_entry* entry = nullptr;
  for (;;) {
    const int r = archive_read_next_header(a, &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK) return fail(std::string("corrupt tar stream: ") + archive_error_string(a));
    std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    while (name.rfind("./", 0) == 0) name.erase(0, 2);
    if (name.empty() || name.front() == '/') return fail("member '" + name + "' has an absolute path; refused");
    for (const auto& part : fs::path(name))
      if (part == "..") return fail("member '" + name + "' has a '..' path; refused");
    // Drop the top-level directory ("<host>/manifest.json" -> "manifest.json").
    const size_t slash = name.find('/');
    std::string rel = slash == std::string::npos ? std::string() : name.substr(slash + 1);
    while (!rel.empty() && rel.back() == '/') rel.pop_back();
    const mode_t type = archive_entry_filetype(entry);
    if (archive_entry_hardlink(entry) || type == AE_IFLNK) return fail("member '" + name + "' is a link; refused");
    if (type == AE_IFDIR) {
      if (!rel.empty()) fs::create_directories(fs::path(dest) / rel, ec);
      continue;
    }
    if (type != AE_IFREG) return fail("member '" + name + "' is not a regular file; refused");
    if (rel.empty()) return fail("member '" + name + "' is outside a top-level directory");
    const fs::path out_path = fs::path(dest) / rel;
    fs::create_directories(out_path.parent_path(), ec);
    std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
    if (!out) return fail("cannot write " + out_path.string());
    if (auto why = copy_member_data(a, out, total); !why.empty()) return fail(why);
    ++files;
  }
  archive_read_free(a);
  if (files == 0) return make_error("tar stream holds no files", tar_path);
  return Ok{};
}

}  // namespace ccdiag
