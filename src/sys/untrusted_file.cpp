#include "sys/untrusted_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ccdiag {

namespace {

const char* kind_of(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISDIR(m)) return "a directory";
  return "not a regular file";
}

std::string mib(uint64_t bytes) {
  if (bytes >= (1u << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

Result<UntrustedFile> UntrustedFile::open(const std::string& path, const std::string& shown) {
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer; the
  // fstat below refuses it before any read could block.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) return make_error("is a symlink; refused (name the file itself)", shown);
    if (err == ENXIO) return make_error("is a socket or an unconnected device; refused (regular files only)", shown);
    return make_error(std::string("cannot open: ") + std::strerror(err), shown);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return make_error(std::string("cannot stat: ") + std::strerror(err), shown);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(std::string("is ") + kind_of(st.st_mode) + "; refused (regular files only)", shown);
  }
  // Regular files ignore O_NONBLOCK; clear it anyway so reads behave plainly.
  if (const int fl = ::fcntl(fd, F_GETFL); fl >= 0) (void)::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  return UntrustedFile(fd, static_cast<uint64_t>(st.st_size), shown);
}

UntrustedFile::~UntrustedFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::string> UntrustedFile::read_up_to(uint64_t max_bytes) {
  std::string out;
  // Sized from fstat, bounded by the cap: a file that grows while read is cut
  // at the cap, one that shrinks ends early.
  out.resize(static_cast<size_t>(std::min<uint64_t>(max_bytes, size_ + 1)));
  size_t have = 0;
  for (;;) {
    if (have == out.size()) {
      if (have >= max_bytes) break;
      out.resize(static_cast<size_t>(std::min<uint64_t>(max_bytes, have + (have / 2) + 65536)));
    }
    const ssize_t n = ::read(fd_, out.data() + have, out.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(std::string("read failed: ") + std::strerror(errno), shown_);
    }
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  out.resize(have);
  return out;
}

Result<std::string> read_untrusted(const std::string& path, uint64_t max_bytes, const std::string& shown) {
  auto f = UntrustedFile::open(path, shown);
  if (!f) return f.error();
  if (f->size() > max_bytes)
    return make_error("too large (" + mib(f->size()) + ", limit " + mib(max_bytes) + "); refused", shown);
  auto text = f->read_up_to(max_bytes + 1);
  if (!text) return text.error();
  if (text->size() > max_bytes) return make_error("grew past the limit of " + mib(max_bytes) + " while read; refused", shown);
  return text;
}

Result<TailText> read_untrusted_tail(const std::string& path, uint64_t keep_bytes, const std::string& shown) {
  auto f = UntrustedFile::open(path, shown);
  if (!f) return f.error();
  TailText t;
  t.file_bytes = f->size();
  if (f->size() > keep_bytes) {
    if (::lseek(f->fd(), static_cast<off_t>(f->size() - keep_bytes), SEEK_SET) < 0)
      return make_error(std::string("cannot seek: ") + std::strerror(errno), shown);
    t.cut = true;
  }
  auto text = f->read_up_to(keep_bytes);
  if (!text) return text.error();
  t.text = std::move(*text);
  if (t.cut) {
    // The first line is a fragment: start at the next full line.
    const size_t nl = t.text.find('\n');
    t.text.erase(0, nl == std::string::npos ? t.text.size() : nl + 1);
  }
  return t;
}

Status check_json_depth(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped byte never closes the string
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return make_error("JSON nested deeper than " + std::to_string(max_depth) + " levels; refused");
    } else if (c == ']' || c == '}') {
      --depth;  // unbalanced input is the parser's to reject
    }
  }
  return Ok{};
}

Result<nlohmann::json> parse_untrusted_json(std::string_view text, const std::string& shown, int max_depth) {
  if (auto st = check_json_depth(text, max_depth); !st) return make_error(st.error().message, shown);
  auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return make_error("malformed JSON", shown, "the file is damaged; collect it again");
  return j;
}

}  // namespace ccdiag
