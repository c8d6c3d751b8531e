// Streaming log reader: plain text or gzip (detected by magic, via zlib),
// Docker json-file logs decoded back to their lines,
// from a file or stdin ("-"), handed out as blocks of whole lines so memory
// stays bounded (one block, default 4 MiB) whatever the file size.
//
// Failure modes (as Errors naming the file): cannot open, read/decompress
// error, binary data (NUL bytes or mostly control characters in the first
// 64 KiB — not a text log). A line longer than the block is cut into pieces
// and counted in `overlong_lines`.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "ccdiag/result.hpp"

namespace ccdiag::logs {

class LogReader {
 public:
  static Result<std::unique_ptr<LogReader>> open(const std::string& path, const std::string& shown,
                                                 size_t block_bytes = 4u << 20);
  ~LogReader();
  LogReader(const LogReader&) = delete;
  LogReader& operator=(const LogReader&) = delete;

  // Next block of complete lines (ends with '\n' except possibly the last
  // block of the file); empty view at end of input. Valid until the next call.
  Result<std::string_view> next();

  size_t bytes_read() const { return bytes_; }
  size_t overlong_lines() const { return overlong_; }
  bool compressed() const { return compressed_; }
  // Docker's json-file log, handed out decoded (docker_json_log.hpp).
  bool docker_json() const { return json_; }

 private:
  LogReader() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string shown_;
  std::string buf_;
  size_t carry_ = 0;      // bytes at the start of buf_ kept from the previous read
  size_t consumed_ = 0;   // bytes of buf_ handed out last time
  size_t block_ = 0;
  size_t bytes_ = 0;
  size_t overlong_ = 0;
  bool eof_ = false;
  bool checked_ = false;
  bool compressed_ = false;
  bool json_ = false;
  bool json_line_start_ = true;
  std::string decoded_;

  Result<std::string_view> emit(std::string_view block);
};

// Whether `head` (the start of a file) looks like binary data rather than text.
bool looks_binary(std::string_view head);

}  // namespace ccdiag::logs
