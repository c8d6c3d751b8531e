// The armoured tar stream of bundle_tar.hpp, line by line (pure, total).
//
//   CCDIAG-BUNDLE-TAR-BEGIN 1 <top>
//   <base64, 76 characters a line>
//   CCDIAG-BUNDLE-TAR-END <decoded bytes>
//
// The decoder takes the lines one host sent (after the launcher's "host: "
// prefix was removed) and appends decoded bytes to a sink; it never holds a
// whole bundle. Lines before BEGIN (a login banner, a warning) are ignored
// and counted; a bad base64 line, a second BEGIN, or a byte count that does
// not match END make the stream `bad` with a reason.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace ccdiag {

class Base64LineEncoder {
 public:
  // Encodes `bytes`, returning the complete 76-character lines ready so far.
  std::string feed(std::string_view bytes);
  // The last (short, padded) line, if any.
  std::string finish();

 private:
  std::string pending_;  // bytes not yet encoded (< 57)
};

class ArmorDecoder {
 public:
  enum class State { waiting, inside, done, bad };
  using Sink = std::function<bool(std::string_view)>;  // false = cannot write

  explicit ArmorDecoder(Sink sink) : sink_(std::move(sink)) {}

  void feed_line(std::string_view line);

  State state() const { return state_; }
  const std::string& error() const { return error_; }
  const std::string& top() const { return top_; }
  uint64_t bytes() const { return bytes_; }
  size_t ignored_lines() const { return ignored_; }
  // A reason when the stream did not end cleanly ("" when done).
  std::string end_problem() const;

 private:
  void fail(std::string why);
  Sink sink_;
  State state_ = State::waiting;
  std::string error_, top_;
  uint64_t bytes_ = 0;
  size_t ignored_ = 0;
};

// Decodes one base64 line (no whitespace inside); false on a bad character or length.
bool base64_decode_line(std::string_view line, std::string& out);

}  // namespace ccdiag
