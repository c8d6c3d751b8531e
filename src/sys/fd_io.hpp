// Writing a whole buffer to a file descriptor: write(2) may write less than
// asked (pipes, signals), so every writer loops; this is the one loop.
#pragma once

#include <string_view>

namespace ccdiag {

// Writes all of `data`, retrying on EINTR and short writes. False on an
// error, with errno set by the failing write(2).
bool write_all(int fd, std::string_view data);

}  // namespace ccdiag
