#include "sys/fd_io.hpp"

#include <unistd.h>

#include <cerrno>

namespace ccdiag {

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {
      errno = EIO;  // a regular file or pipe that accepts nothing: do not spin
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace ccdiag
