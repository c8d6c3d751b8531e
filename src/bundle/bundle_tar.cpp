#include "bundle/bundle_tar.hpp"
#include "sys/fd_io.hpp"

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

#include "bundle/armor.hpp"
#include "sys/run_deadline.hpp"
#include "sys/untrusted_file.hpp"

namespace fs = std::filesystem;

namespace ccdiag {

namespace {


// archive_error_string() is NULL when libarchive set no message (a header
// it only warned about): found by fuzz/bundle_reader_fuzz.cpp as a strlen(NULL).
std::string archive_why(struct archive* a) {
  const char* s = archive_error_string(a);
  return s ? s : "unknown libarchive error";
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
    if (!write_all(s->fd, lines)) s->failed = true;
  } else if (!write_all(s->fd, std::string_view(static_cast<const char*>(buf), n))) {
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
    if (!write_all(fd, begin)) return make_error(std::string("write failed: ") + std::strerror(errno), "stdout");
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
    const std::string msg = sink.failed ? std::string("write failed: ") + std::strerror(errno) : archive_why(a);
    archive_write_free(a);
    return make_error(msg, "tar stream");
  }
  archive_write_free(a);
  if (armor) {
    const std::string tail = sink.enc.finish() + kArmorEnd + " " + std::to_string(sink.bytes) + "\n";
    if (!write_all(fd, tail)) return make_error(std::string("write failed: ") + std::strerror(errno), "stdout");
  }
  return Ok{};
}

std::string TarBudget::admit(archive_entry* entry, const TarLimits& limits) {
  if (std::chrono::steady_clock::now() > limits.deadline)
    return "extraction did not finish within --timeout; refused (raise --timeout for a very large bundle)";
  if (++members > limits.max_members)
    return "more than " + std::to_string(limits.max_members) + " members; refused (a bundle holds far fewer)";
  const la_int64_t size = archive_entry_size_is_set(entry) ? archive_entry_size(entry) : 0;
  if (size < 0 || static_cast<uint64_t>(size) > limits.max_bytes - std::min(bytes, limits.max_bytes))
    return "archive expands beyond " + std::to_string(limits.max_bytes >> 30) + " GiB; refused";
  return "";
}

std::string copy_member_data(struct archive* a, int fd, TarBudget& budget, const TarLimits& limits) {
  const void* buf;
  size_t size;
  la_int64_t offset;
  for (;;) {
    const int rb = archive_read_data_block(a, &buf, &size, &offset);
    if (rb == ARCHIVE_EOF) return "";
    if (rb != ARCHIVE_OK) return "corrupt or truncated tar archive: " + archive_why(a);
    budget.bytes += size;
    if (budget.bytes > limits.max_bytes)
      return "archive expands beyond " + std::to_string(limits.max_bytes >> 30) + " GiB; refused";
    if (std::chrono::steady_clock::now() > limits.deadline)
      return "extraction did not finish within --timeout; refused (raise --timeout for a very large bundle)";
    // Sparse members: data blocks carry their offset.
    if (::lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0 ||
        !write_all(fd, std::string_view(static_cast<const char*>(buf), size)))
      return std::string("cannot write an extracted member: ") + std::strerror(errno);
  }
}

Status extract_tar_into(const std::string& tar_path, const OutputDir& dest, bool strip_top, const TarLimits& limits) {
  // The tarball goes through the bounded reader's checks first: a FIFO or a
  // device named *.tar.gz is refused before libarchive blocks on it.
  auto file = UntrustedFile::open(tar_path, tar_path);
  if (!file) return file.error();
  struct archive* a = archive_read_new();
  archive_read_support_filter_gzip(a);
  archive_read_support_filter_none(a);
  archive_read_support_format_tar(a);
  archive_read_support_format_gnutar(a);
  auto fail = [&](const std::string& msg) -> Error {
    archive_read_free(a);
    return make_error(msg, tar_path, "pass a bundle written by `ccdiag collect` (a directory or its .tar.gz)");
  };
  if (archive_read_open_fd(a, file->fd(), 1 << 16) != ARCHIVE_OK)
    return fail("not a readable tar archive: " + archive_why(a));
  TarBudget budget;
  size_t files = 0;
  archive_entry* entry = nullptr;
  for (;;) {
    const int r = archive_read_next_header(a, &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK) return fail("corrupt or truncated tar archive: " + archive_why(a));
    std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    while (name.rfind("./", 0) == 0) name.erase(0, 2);
    if (name.empty() && archive_entry_filetype(entry) == AE_IFDIR) continue;  // "./"
    if (name.empty() || name.front() == '/') return fail("member '" + name + "' has an absolute path; refused");
    for (const auto& part : fs::path(name))
      if (part == "..") return fail("member '" + name + "' has a '..' path; refused");
    while (!name.empty() && name.back() == '/') name.pop_back();
    std::string rel = name;
    if (strip_top) {
      const size_t slash = name.find('/');
      rel = slash == std::string::npos ? std::string() : name.substr(slash + 1);
    }
    const mode_t type = archive_entry_filetype(entry);
    if (archive_entry_hardlink(entry) || type == AE_IFLNK)
      return fail("member '" + name + "' is a link; refused (bundles hold plain files only)");
    if (type != AE_IFDIR && type != AE_IFREG) return fail("member '" + name + "' is not a regular file; refused");
    // Count, size and time are checked from the header, before anything is written.
    if (auto why = budget.admit(entry, limits); !why.empty()) return fail(why);
    if (type == AE_IFDIR) {
      if (!rel.empty())
        if (auto st = dest.make_dir(rel); !st) return fail("member '" + name + "': " + st.error().message);
      continue;
    }
    if (rel.empty()) return fail("member '" + name + "' is outside a top-level directory");
    auto fd = dest.create_file(rel);
    if (!fd) {
      // O_EXCL: a second member of the same name would silently replace the
      // first (the one a reviewer looked at); refused instead.
      if (fd.error().message.rfind("already exists", 0) == 0) return fail("member '" + name + "' appears twice; refused");
      return fail("member '" + name + "': " + fd.error().message);
    }
    auto why = copy_member_data(a, *fd, budget, limits);
    ::close(*fd);
    if (!why.empty()) return fail(why);
    ++files;
  }
  archive_read_free(a);
  if (files == 0) return make_error("tar archive holds no files", tar_path);
  return Ok{};
}

Status extract_bundle_tar(const std::string& tar_path, const std::string& dest) {
  auto dir = OutputDir::open_fresh(dest);
  if (!dir) return dir.error();
  TarLimits limits;
  limits.deadline = run_deadline();
  return extract_tar_into(tar_path, *dir, /*strip_top=*/true, limits);
}

}  // namespace ccdiag
