#include "collectors/logs/reader.hpp"

#include "collectors/logs/docker_json_log.hpp"
#include "sys/untrusted_file.hpp"

#include <algorithm>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

namespace ccdiag::logs {

struct LogReader::Impl {
  gzFile gz = nullptr;
  ~Impl() {
    if (gz) gzclose(gz);
  }
};

bool looks_binary(std::string_view head) {
  head = head.substr(0, 64 * 1024);
  if (head.empty()) return false;
  size_t ctrl = 0;
  for (unsigned char c : head) {
    if (c == 0) return true;
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != 0x1b && c != '\f' && c != '\b') ++ctrl;
  }
  return ctrl * 10 > head.size();
}

Result<std::unique_ptr<LogReader>> LogReader::open(const std::string& path, const std::string& shown,
                                                   size_t block_bytes) {
  // Files through the bounded reader's open (sys/untrusted_file.hpp): a FIFO,
  // device or symlink is refused instead of blocking past --timeout.
  int fd = -1;
  if (path == "-") {
    fd = dup(STDIN_FILENO);
    if (fd < 0) return make_error(std::string("cannot open: ") + std::strerror(errno), shown);
  } else {
    auto f = UntrustedFile::open(path, shown);
    if (!f) return f.error();
    fd = f->release();
  }
  // Peek at the magic to report "compressed" (gzread is transparent for plain data).
  unsigned char magic[2] = {0, 0};
  if (path != "-") {
    if (pread(fd, magic, 2, 0) < 0) {
      const int e = errno;
      close(fd);
      return make_error(std::string("cannot read: ") + std::strerror(e), shown);
    }
  }
  gzFile gz = gzdopen(fd, "rb");
  if (!gz) {
    close(fd);
    return make_error("cannot open (zlib)", shown);
  }
  gzbuffer(gz, 1u << 20);
  std::unique_ptr<LogReader> r(new LogReader());
  r->impl_ = std::make_unique<Impl>();
  r->impl_->gz = gz;
  r->shown_ = shown;
  r->block_ = block_bytes < 4096 ? 4096 : block_bytes;
  r->buf_.resize(r->block_);
  r->compressed_ = magic[0] == 0x1f && magic[1] == 0x8b;
  return r;
}

LogReader::~LogReader() = default;

Result<std::string_view> LogReader::next() {
  // Move the unconsumed tail (a partial line) to the front.
  if (consumed_ > 0) {
    const size_t tail = carry_ - consumed_;
    if (tail > 0) std::memmove(buf_.data(), buf_.data() + consumed_, tail);
    carry_ = tail;
    consumed_ = 0;
  }
  while (!eof_ && carry_ < buf_.size()) {
    const int n = gzread(impl_->gz, buf_.data() + carry_, static_cast<unsigned>(buf_.size() - carry_));
    if (n < 0) {
      int code = 0;
      const char* msg = gzerror(impl_->gz, &code);
      return make_error(std::string("read error: ") + (code == Z_ERRNO ? std::strerror(errno) : msg), shown_);
    }
    if (n == 0) {
      // zlib ends a cut .gz like a complete one (Z_BUF_ERROR, no -1): the
      // missing end is where a job's failure is, so say so (issue 22).
      int code = Z_OK;
      (void)gzerror(impl_->gz, &code);
      if (code == Z_BUF_ERROR)
        return make_error("compressed log is truncated (unexpected end of gzip stream)", shown_,
                          "its end is missing; decompress what is there (zcat) and pass the text, or copy it again");
      eof_ = true;
      break;
    }
    carry_ += static_cast<size_t>(n);
    bytes_ += static_cast<size_t>(n);
  }
  if (!checked_ && (carry_ >= std::min<size_t>(65536, buf_.size()) || eof_)) {
    checked_ = true;
    if (looks_binary(std::string_view(buf_.data(), carry_)))
      return make_error("binary data, not a text log", shown_, "pass NCCL / PyTorch / kernel text logs (.log or .gz)");
    json_ = looks_docker_json_log(std::string_view(buf_.data(), std::min<size_t>(carry_, 65536)));
  }
  if (carry_ == 0) return std::string_view{};
  std::string_view all(buf_.data(), carry_);
  if (eof_) {
    consumed_ = carry_;
    return emit(all);
  }
  const size_t nl = all.rfind('\n');
  if (nl == std::string_view::npos) {
    if (carry_ < buf_.size()) {  // keep reading: the line continues
      consumed_ = 0;
      return next();
    }
    ++overlong_;  // a single line fills the block: cut it here
    consumed_ = carry_;
    return emit(all);
  }
  consumed_ = nl + 1;
  return emit(all.substr(0, nl + 1));
}

Result<std::string_view> LogReader::emit(std::string_view block) {
  if (!json_) return block;
  decoded_.clear();
  decode_docker_json_log(block, decoded_, json_line_start_);
  // A block of entries that all decoded to nothing is not the end of input.
  if (decoded_.empty() && !block.empty()) decoded_ = "\n";
  return std::string_view(decoded_);
}

}  // namespace ccdiag::logs
