// The one way ccdiag reads a file somebody else made: a bundle's manifest,
// evidence and raw artefacts, a log given to `logs` / `--log`, `--kernel-log`,
// a flight-recorder dump. ccdiag runs as root, so such a file is hostile until
// shown otherwise (docs/security.md):
//
//   - a FIFO, socket or device never returns or never ends (a FIFO as
//     manifest.json hung `diagnose` past --timeout; /dev/zero as manifest
//     ran out of memory). The file is opened O_NONBLOCK (opening a FIFO does
//     not wait for a writer) and fstat'ed; anything but a regular file is
//     refused before a byte is read.
//   - a planted symlink turns "read the user's log" into "copy /etc/shadow
//     into a bundle": O_NOFOLLOW refuses a symlink as the last component.
//   - size caps are checked against fstat before reading, and a read never
//     returns more than the cap even when the file grows meanwhile.
//   - JSON is depth-checked before it is parsed: nlohmann's parser is
//     iterative, but copying or converting a 100,000-deep value recurses
//     once per level and overflows the stack.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ccdiag/result.hpp"

namespace ccdiag {

// Deeper JSON is refused. Everything ccdiag writes is < 10 deep; 64 leaves room
// for evidence data nested by future collectors and stays far from the stack.
inline constexpr int kMaxJsonDepth = 64;

// An open regular file (never a FIFO, device, socket or symlink).
class UntrustedFile {
 public:
  // Opens `path` read-only with O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC, then refuses
  // what fstat says is not a regular file. `shown` names the file in errors
  // (a bundle-relative name, so no outside path leaks into a message).
  static Result<UntrustedFile> open(const std::string& path, const std::string& shown);

  UntrustedFile(UntrustedFile&& o) noexcept : fd_(o.fd_), size_(o.size_), shown_(std::move(o.shown_)) { o.fd_ = -1; }
  UntrustedFile& operator=(UntrustedFile&&) = delete;
  UntrustedFile(const UntrustedFile&) = delete;
  ~UntrustedFile();

  int fd() const { return fd_; }
  // Hands the descriptor to a reader that owns it (zlib's gzdopen).
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  uint64_t size() const { return size_; }  // at open time

  // Reads up to `max_bytes` from the current offset (fewer at end of file).
  Result<std::string> read_up_to(uint64_t max_bytes);

 private:
  UntrustedFile(int fd, uint64_t size, std::string shown) : fd_(fd), size_(size), shown_(std::move(shown)) {}
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string shown_;
};

// The whole file, refused ("too large ... limit N") when fstat says it holds
// more than `max_bytes`.
Result<std::string> read_untrusted(const std::string& path, uint64_t max_bytes, const std::string& shown);

// The newest `keep_bytes` of the file (a log grows at its end), cut at a line
// start when it was cut at all. Never reads more than `keep_bytes`.
struct TailText {
  std::string text;
  uint64_t file_bytes = 0;  // size at open time
  bool cut = false;         // older bytes were dropped
};
Result<TailText> read_untrusted_tail(const std::string& path, uint64_t keep_bytes, const std::string& shown);

// Refuses JSON nested deeper than `max_depth` arrays/objects without parsing
// it (strings and escapes are skipped, so brackets inside strings don't count).
Status check_json_depth(std::string_view text, int max_depth = kMaxJsonDepth);

// check_json_depth, then nlohmann's parser without exceptions. Errors name
// `shown`: "nested deeper than 64 levels" or "malformed JSON".
Result<nlohmann::json> parse_untrusted_json(std::string_view text, const std::string& shown,
                                            int max_depth = kMaxJsonDepth);

}  // namespace ccdiag
