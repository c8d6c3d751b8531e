#include "bundle/armor.hpp"

#include "bundle/bundle_tar.hpp"

namespace ccdiag {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr size_t kLineBytes = 57;  // 57 bytes -> 76 characters

void encode_block(std::string_view in, std::string& out) {
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const uint32_t v = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8) | static_cast<uint8_t>(in[i + 2]);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  const size_t rest = in.size() - i;
  if (rest) {
    uint32_t v = static_cast<uint8_t>(in[i]) << 16;
    if (rest == 2) v |= static_cast<uint8_t>(in[i + 1]) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
}

int value_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

std::string Base64LineEncoder::feed(std::string_view bytes) {
  std::string out;
  pending_.append(bytes.data(), bytes.size());
  size_t i = 0;
  for (; i + kLineBytes <= pending_.size(); i += kLineBytes) {
    encode_block(std::string_view(pending_).substr(i, kLineBytes), out);
    out.push_back('\n');
  }
  pending_.erase(0, i);
  return out;
}

std::string Base64LineEncoder::finish() {
  std::string out;
  if (!pending_.empty()) {
    encode_block(pending_, out);
    out.push_back('\n');
  }
  pending_.clear();
  return out;
}

bool base64_decode_line(std::string_view line, std::string& out) {
  if (line.empty() || line.size() % 4 != 0) return false;
  for (size_t i = 0; i < line.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = line[i + k];
      if (c == '=') {
        // Padding only at the very end, only in the last two places.
        if (i + 4 != line.size() || k < 2) return false;
        v[k] = 0;
        ++pad;
      } else {
        if (pad) return false;
        v[k] = value_of(c);
        if (v[k] < 0) return false;
      }
    }
    const uint32_t x = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out.push_back(static_cast<char>((x >> 16) & 0xff));
    if (pad < 2) out.push_back(static_cast<char>((x >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(x & 0xff));
  }
  return true;
}

void ArmorDecoder::fail(std::string why) {
  if (state_ == State::bad) return;
  state_ = State::bad;
  error_ = std::move(why);
}

void ArmorDecoder::feed_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  if (state_ == State::bad) return;
  if (starts_with(line, kArmorBegin)) {
    if (state_ != State::waiting) return fail("a second bundle stream began before the first ended");
    std::string_view rest = line.substr(std::string_view(kArmorBegin).size());
    if (!starts_with(rest, " 1 ")) return fail("unsupported stream version: " + std::string(line.substr(0, 80)));
    top_ = std::string(rest.substr(3, 253));
    state_ = State::inside;
    return;
  }
  if (state_ == State::waiting) {
    ++ignored_;
    return;
  }
  if (state_ == State::done) {
    ++ignored_;
    return;
  }
  if (starts_with(line, kArmorEnd)) {
    std::string_view n = line.substr(std::string_view(kArmorEnd).size());
    while (!n.empty() && n.front() == ' ') n.remove_prefix(1);
    uint64_t want = 0;
    if (n.empty() || n.size() > 19) return fail("malformed end line");
    for (char c : n) {
      if (c < '0' || c > '9') return fail("malformed end line");
      want = want * 10 + static_cast<uint64_t>(c - '0');
    }
    if (want != bytes_)
      return fail("stream lost data: " + std::to_string(bytes_) + " bytes received, " + std::to_string(want) + " sent");
    state_ = State::done;
    return;
  }
  std::string decoded;
  if (!base64_decode_line(line, decoded)) return fail("bad base64 line in the bundle stream");
  bytes_ += decoded.size();
  if (!sink_(decoded)) fail("cannot write the received stream");
}

std::string ArmorDecoder::end_problem() const {
  switch (state_) {
    case State::waiting: return "no bundle stream in the output";
    case State::inside: return "bundle stream cut short (no end line; timed out or killed?)";
    case State::bad: return error_;
    case State::done: return "";
  }
  return "";
}

}  // namespace ccdiag
