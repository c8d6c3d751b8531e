// write_all (sys/fd_io): the one write loop behind bundles, tar streams,
// probe results and atomic files.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <thread>

#include "sys/fd_io.hpp"

using namespace ccdiag;

TEST_CASE("write_all writes a buffer larger than a pipe holds, in order", "[sys][io]") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::string data(1 << 20, '\0');  // 16x a default pipe buffer: many short writes
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 % 251);
  std::string got;
  std::thread reader([&] {
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  });
  CHECK(write_all(fds[1], data));
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  CHECK(got == data);
}

TEST_CASE("write_all reports the failing write's errno", "[sys][io]") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  ::close(fds[0]);
  ::close(fds[1]);
  errno = 0;
  CHECK_FALSE(write_all(fds[1], "x"));
  CHECK(errno == EBADF);
  CHECK(write_all(fds[1], ""));  // nothing to write: nothing fails
}
