// A directory ccdiag writes into as root without being turned against the
// host: nothing is ever written through a symlink, into a file that already
// exists, or into a directory another user controls.
//
// `collect --out /tmp/ccdiag-$(hostname)` is the documented call; /tmp is
// shared, so any local user can pre-create that name (as a directory holding
// `manifest.json -> /etc/shadow`, or as a symlink to /etc). OutputDir opens
// the directory once with O_NOFOLLOW and creates every file and
// sub-directory relative to that descriptor with O_EXCL|O_NOFOLLOW, so a
// planted name makes the write fail instead of following it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/result.hpp"

namespace ccdiag {

class OutputDir {
 public:
  // Creates `path` (mode 0700) or adopts an existing directory that is not a
  // symlink, is owned by the effective user, is not writable by group or
  // others, and is empty. Anything else is refused with a one-line reason.
  static Result<OutputDir> open_fresh(const std::string& path);

  // Creates a new private directory `<parent>/<prefix>XXXXXX` (mkdtemp),
  // parent = $XDG_RUNTIME_DIR when it is a directory, else $TMPDIR, else /tmp.
  static Result<OutputDir> make_private(const std::string& prefix);

  OutputDir(OutputDir&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }
  OutputDir& operator=(OutputDir&& o) noexcept;
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  ~OutputDir();

  const std::string& path() const { return path_; }

  // Writes `content` to `rel` (components separated by '/', no "..", not
  // absolute), creating the intermediate directories. Refuses a name that
  // already exists, whatever it is.
  Status write_file(std::string_view rel, std::string_view content) const;

  // The same, for content streamed by the caller (a tar member): a new file
  // opened for writing, or an error. The caller closes the descriptor.
  Result<int> create_file(std::string_view rel) const;

  // Creates `rel` and its parents (an existing directory of this run is fine).
  Status make_dir(std::string_view rel) const;

 private:
  Result<int> open_parent(const std::vector<std::string>& parts, size_t upto, const std::string& shown) const;
  OutputDir(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

}  // namespace ccdiag
