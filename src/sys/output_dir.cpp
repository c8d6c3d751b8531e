#include "sys/output_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sys/fd_io.hpp"

namespace ccdiag {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

constexpr const char* kOutHint = "give --out a new path, or leave --out out for a private directory";

// True when the directory behind `fd` has no entries but "." and "..".
Result<bool> dir_is_empty(int fd) {
  const int dup_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return make_error("cannot list: " + errno_text(errno));
  DIR* d = ::fdopendir(dup_fd);
  if (!d) {
    const int err = errno;
    ::close(dup_fd);
    return make_error("cannot list: " + errno_text(err));
  }
  bool empty = true;
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    empty = false;
    break;
  }
  ::closedir(d);
  return empty;
}

// Splits "raw/logs/a.log" into its components; refuses empty, absolute and
// ".." paths (a raw artefact name comes from collected data).
Result<std::vector<std::string>> components(std::string_view rel) {
  std::vector<std::string> parts;
  if (rel.empty() || rel.front() == '/') return make_error("refusing output path", std::string(rel));
  size_t start = 0;
  while (start <= rel.size()) {
    const size_t slash = rel.find('/', start);
    const std::string_view part = rel.substr(start, slash == std::string_view::npos ? rel.npos : slash - start);
    if (part.empty() || part == "." || part == "..") return make_error("refusing output path", std::string(rel));
    parts.emplace_back(part);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

}  // namespace

OutputDir& OutputDir::operator=(OutputDir&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

OutputDir::~OutputDir() {
  if (fd_ >= 0) ::close(fd_);
}

Result<OutputDir> OutputDir::open_fresh(const std::string& path) {
  if (path.empty()) return make_error("empty output directory name", "--out");
  bool created = true;
  if (::mkdir(path.c_str(), 0700) != 0) {
    if (errno != EEXIST) return make_error("cannot create directory: " + errno_text(errno), path, "check that --out is writable");
    created = false;
  }
  // O_NOFOLLOW on the last component: a planted symlink to /etc fails here.
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP || err == ENOTDIR)
      return make_error("exists and is not a directory (a symlink or a file); refused", path, kOutHint);
    return make_error("cannot open directory: " + errno_text(err), path, kOutHint);
  }
  OutputDir dir(fd, path);
  if (created) return dir;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return make_error("cannot stat: " + errno_text(errno), path);
  if (st.st_uid != ::geteuid())
    return make_error("exists and belongs to another user (uid " + std::to_string(st.st_uid) + "); refused", path, kOutHint);
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return make_error("exists and is writable by other users; refused", path, kOutHint);
  auto empty = dir_is_empty(fd);
  if (!empty) return make_error(empty.error().message, path);
  if (!*empty) return make_error("exists and is not empty; refused (a bundle is written into a new directory)", path, kOutHint);
  return dir;
}

Result<OutputDir> OutputDir::make_private(const std::string& prefix) {
  std::string parent = "/tmp";
  struct stat st {};
  for (const char* var : {"XDG_RUNTIME_DIR", "TMPDIR"}) {
    const char* v = std::getenv(var);
    if (v && *v == '/' && ::stat(v, &st) == 0 && S_ISDIR(st.st_mode) && ::access(v, W_OK) == 0) {
      parent = v;
      break;
    }
  }
  std::string tmpl = parent + "/" + prefix + "XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) return make_error("cannot create a private directory: " + errno_text(errno), parent);
  return open_fresh(buf.data());
}

Result<int> OutputDir::open_parent(const std::vector<std::string>& parts, size_t upto, const std::string& shown) const {
  int dir_fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (dir_fd < 0) return make_error("cannot open directory: " + errno_text(errno), shown);
  for (size_t i = 0; i < upto; ++i) {
    const std::string& name = parts[i];
    // EEXIST is fine: the top directory is ours alone (checked when opened),
    // so an existing sub-directory is one this run made for an earlier file.
    if (::mkdirat(dir_fd, name.c_str(), 0700) != 0 && errno != EEXIST) {
      const int err = errno;
      ::close(dir_fd);
      return make_error("cannot create directory: " + errno_text(err), shown);
    }
    const int next = ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int err = errno;
    ::close(dir_fd);
    if (next < 0) return make_error("cannot open directory: " + errno_text(err), shown);
    dir_fd = next;
  }
  return dir_fd;
}

Status OutputDir::make_dir(std::string_view rel) const {
  auto parts = components(rel);
  if (!parts) return parts.error();
  auto d = open_parent(*parts, parts->size(), path_ + "/" + std::string(rel));
  if (!d) return d.error();
  ::close(*d);
  return Ok{};
}

Result<int> OutputDir::create_file(std::string_view rel) const {
  auto parts = components(rel);
  if (!parts) return parts.error();
  const std::string shown = path_ + "/" + std::string(rel);
  auto dir_fd = open_parent(*parts, parts->size() - 1, shown);
  if (!dir_fd) return dir_fd.error();
  const int fd = ::openat(*dir_fd, parts->back().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  const int open_err = errno;
  ::close(*dir_fd);
  if (fd < 0) {
    if (open_err == EEXIST) return make_error("already exists; refused (never overwritten)", shown);
    return make_error("cannot create: " + errno_text(open_err), shown, "check that --out is writable");
  }
  return fd;
}

Status OutputDir::write_file(std::string_view rel, std::string_view content) const {
  const std::string shown = path_ + "/" + std::string(rel);
  auto f = create_file(rel);
  if (!f) return f.error();
  const int fd = *f;
  if (!write_all(fd, content)) {
    const int err = errno;
    ::close(fd);
    return make_error("write failed: " + errno_text(err), shown);
  }
  if (::close(fd) != 0) return make_error("write failed: " + errno_text(errno), shown);
  return Ok{};
}

}  // namespace ccdiag
