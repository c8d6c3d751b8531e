#include "ccdiag/sysroot.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ccdiag {

namespace {
int errno_from_name(const std::string& n) {
  static const std::pair<const char*, int> names[] = {
      {"EINVAL", EINVAL}, {"EIO", EIO},       {"ENODEV", ENODEV},   {"ENODATA", ENODATA}, {"EACCES", EACCES},
      {"EPERM", EPERM},   {"ENXIO", ENXIO},   {"EOPNOTSUPP", EOPNOTSUPP}, {"EBUSY", EBUSY}, {"ETIMEDOUT", ETIMEDOUT}};
  for (const auto& [name, e] : names)
    if (n == name) return e;
  return 0;
}
}  // namespace

SysRoot::SysRoot(std::string prefix) : prefix_(std::move(prefix)) {
  while (prefix_.size() > 1 && prefix_.back() == '/') prefix_.pop_back();
  if (prefix_ == "/") prefix_.clear();
  if (prefix_.empty()) return;
  char buf[PATH_MAX];
  if (::realpath(prefix_.c_str(), buf)) real_prefix_ = buf;
  std::ifstream in(prefix_ + "/errno.map");
  if (!in || real_prefix_.empty()) return;
  auto faults = std::make_shared<std::map<std::string, int>>();
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string rel, name;
    if (!(ls >> rel >> name) || rel[0] == '#') continue;
    const int err = errno_from_name(name);
    if (err == 0) continue;
    const std::string full = prefix_ + "/" + rel;
    // Canonical key: the fault follows the file whichever symlink reaches it.
    if (::realpath(full.c_str(), buf)) (*faults)[buf] = err;
  }
  faults_ = std::move(faults);
}

int SysRoot::injected_errno(const std::string& host_path) const {
  if (!faults_ || faults_->empty()) return 0;
  char buf[PATH_MAX];
  if (!::realpath(path(host_path).c_str(), buf)) return 0;
  const auto it = faults_->find(buf);
  return it == faults_->end() ? 0 : it->second;
}

std::string SysRoot::path(const std::string& host_path) const {
  if (prefix_.empty()) return host_path;
  if (!host_path.empty() && host_path.front() == '/') return prefix_ + host_path;
  return prefix_ + "/" + host_path;
}

namespace {
Error errno_error(const std::string& what, const std::string& host_path, int err) {
  std::string hint;
  if (err == EACCES || err == EPERM) hint = "run as root or with the needed capability";
  return make_error(what + ": " + std::strerror(err), host_path, hint);
}
}  // namespace

Result<std::string> SysRoot::read_file(const std::string& host_path, size_t max_bytes) const {
  // O_NONBLOCK: a FIFO or a character device standing in for a file must not
  // block the open; reads from procfs/sysfs ignore the flag.
  const int fd = ::open(path(host_path).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return errno_error("cannot open", host_path, errno);
  if (const int injected = injected_errno(host_path)) {  // fixture: fails like the real attribute
    ::close(fd);
    return errno_error("cannot read", host_path, injected);
  }
  std::string out;
  char buf[8192];
  while (out.size() < max_bytes) {
    const size_t want = std::min(sizeof buf, max_bytes - out.size());
    const ssize_t n = ::read(fd, buf, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      // sysfs attributes that the driver cannot answer fail with EINVAL/EIO/ENODATA
      // at read time, not open time (e.g. an AER counter on a device without AER).
      return errno_error("cannot read", host_path, err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

Result<std::string> SysRoot::read_line(const std::string& host_path) const {
  auto r = read_file(host_path, 64 * 1024);
  if (!r) return r.error();
  std::string s = std::move(r).value();
  if (auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  return s;
}

Result<std::vector<std::string>> SysRoot::list_dir(const std::string& host_path) const {
  DIR* d = ::opendir(path(host_path).c_str());
  if (!d) return errno_error("cannot list", host_path, errno);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::string> SysRoot::read_link(const std::string& host_path) const {
  char buf[4096];
  const ssize_t n = ::readlink(path(host_path).c_str(), buf, sizeof buf - 1);
  if (n < 0) return errno_error("cannot readlink", host_path, errno);
  return std::string(buf, static_cast<size_t>(n));
}

bool SysRoot::exists(const std::string& host_path) const {
  struct stat st{};
  return ::lstat(path(host_path).c_str(), &st) == 0;
}

}  // namespace ccdiag
