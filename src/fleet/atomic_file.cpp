#include "fleet/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sys/fd_io.hpp"

namespace ccdiag {

Status write_file_atomically(const std::string& path, std::string_view content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string tmp = path + "." + std::to_string(::getpid()) + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(std::string("cannot create: ") + std::strerror(errno), tmp, "check that the directory exists and is writable");
  if (!write_all(fd, content)) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return make_error(std::string("write failed: ") + std::strerror(err), tmp);
  }
  // fsync before rename: after a crash the name must point at complete data.
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return make_error(std::string("fsync failed: ") + std::strerror(err), tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return make_error(std::string("cannot rename into place: ") + std::strerror(err), path);
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Ok{};
}

}  // namespace ccdiag
