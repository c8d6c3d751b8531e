#include "sys/kmsg.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ccdiag {

Result<KmsgDump> read_kmsg(const std::string& path, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    std::string hint;
    if (err == EPERM || err == EACCES) hint = "kernel.dmesg_restrict=1 needs CAP_SYSLOG; or pass --kernel-log FILE";
    if (err == ENOENT) hint = "containers often lack /dev/kmsg; pass --kernel-log FILE (journalctl -k -o json)";
    return make_error(std::string("cannot open: ") + std::strerror(err), path, hint);
  }
  KmsgDump dump;
  std::string buf(16384, '\0');  // must hold a whole record, or read() fails with EINVAL
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) {  // overwritten while we read: the position jumped forward
        ++dump.lost;
        continue;
      }
      if (errno == EAGAIN) break;  // end of the ring buffer
      const int err = errno;
      ::close(fd);
      return make_error(std::string("read failed: ") + std::strerror(err), path);
    }
    if (n == 0) break;
    std::string_view rec(buf.data(), static_cast<size_t>(n));
    // Continuation lines (" KEY=value") follow the first newline; keep the record line.
    const size_t nl = rec.find('\n');
    dump.records.append(rec.substr(0, nl));
    dump.records.push_back('\n');
    ++dump.count;
    if (dump.records.size() > 2 * max_bytes) dump.records.erase(0, dump.records.size() - max_bytes);
  }
  ::close(fd);
  if (dump.records.size() > max_bytes) {
    dump.records.erase(0, dump.records.size() - max_bytes);
    if (auto nl = dump.records.find('\n'); nl != std::string::npos) dump.records.erase(0, nl + 1);
  }
  return dump;
}

}  // namespace ccdiag
