#include "sys/redact.hpp"

#include <array>
#include <cctype>
#include <cmath>

namespace ccdiag {

namespace {

std::string upper(std::string_view s) {
  std::string u(s);
  for (auto& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool secret_word(std::string_view name_upper) {
  for (std::string_view w : {"TOKEN", "SECRET", "PASS", "PWD", "CREDENTIAL", "AUTH", "KEY", "PRIVATE", "SESSION",
                             "COOKIE", "SIGNATURE"})
    if (name_upper.find(w) != std::string_view::npos) return true;
  return false;
}

// Names with a secret-looking word that are plain configuration.
bool known_harmless_name(std::string_view name_upper) {
  for (std::string_view n : {"NCCL_IB_PKEY", "NCCL_RAS_TIMEOUT_FACTOR"})
    if (name_upper == n) return true;
  return false;
}

bool delimiter(char c) {
  return std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == ';' || c == '"' || c == '\'' || c == '=' ||
         c == '(' || c == '<' || c == '[' || c == '{' || c == '|';
}

// "user:pw@host" with or without "scheme://" in front; the password may hold '/'.
bool has_userinfo(std::string_view v) {
  for (size_t at = v.find('@'); at != std::string_view::npos; at = v.find('@', at + 1)) {
    size_t start = at;
    while (start > 0 && !delimiter(v[start - 1])) --start;
    std::string_view seg = v.substr(start, at - start);
    if (const size_t scheme = seg.find("://"); scheme != std::string_view::npos) seg = seg.substr(scheme + 3);
    const size_t colon = seg.find(':');
    if (colon != std::string_view::npos && colon > 0 && colon + 1 < seg.size()) return true;
  }
  return false;
}

// "Bearer abc...", "Basic dXNlcjpwdw==", "Authorization: ..." anywhere.
bool has_http_credential(std::string_view v) {
  const std::string u = upper(v);
  if (u.find("AUTHORIZATION") != std::string::npos) return true;
  for (std::string_view scheme : {"BEARER ", "BASIC ", "TOKEN ", "DIGEST "}) {
    for (size_t p = u.find(scheme); p != std::string::npos; p = u.find(scheme, p + 1)) {
      size_t q = p + scheme.size(), n = 0;
      while (q < u.size() && !std::isspace(static_cast<unsigned char>(u[q]))) ++q, ++n;
      if (n >= 6) return true;
    }
  }
  return false;
}

// "?token=...", "&key=...", "password=...", "secret: ..." inside a value.
bool has_secret_assignment(std::string_view v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != '=' && v[i] != ':') continue;
    size_t start = i;
    while (start > 0 && (std::isalnum(static_cast<unsigned char>(v[start - 1])) || v[start - 1] == '_' ||
                         v[start - 1] == '-' || v[start - 1] == '.'))
      --start;
    if (start == i) continue;
    size_t end = i + 1;
    if (v[i] == ':' && end < v.size() && v[end] == ' ') ++end;
    if (end >= v.size() || v[end] == '&' || v[end] == ';' || std::isspace(static_cast<unsigned char>(v[end]))) continue;
    if (secret_word(upper(v.substr(start, i - start)))) return true;
  }
  return false;
}

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// 8-4-4-4-12 hex, optionally after "GPU-" or "MIG-": an identifier, not a key.
bool is_uuid(std::string_view t) {
  if (starts_with(t, "GPU-") || starts_with(t, "MIG-")) t.remove_prefix(4);
  if (t.size() != 36) return false;
  for (size_t i = 0; i < t.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? t[i] != '-' : !is_hex(t[i])) return false;
  }
  return true;
}

double entropy_bits_per_char(std::string_view t) {
  std::array<int, 256> count{};
  for (char c : t) ++count[static_cast<unsigned char>(c)];
  double h = 0;
  for (int n : count)
    if (n) {
      const double p = static_cast<double>(n) / static_cast<double>(t.size());
      h -= p * std::log2(p);
    }
  return h;
}

bool token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '=' || c == '_' || c == '-';
}

// A random key: long, and either mixing character classes or of high entropy.
bool looks_random(std::string_view t) {
  if (t.size() < 20 || is_uuid(t)) return false;
  if (t.front() == '/') return false;  // a path
  bool up = false, low = false, digit = false;
  size_t slashes = 0;
  for (char c : t) {
    const unsigned char u = static_cast<unsigned char>(c);
    up |= std::isupper(u) != 0;
    low |= std::islower(u) != 0;
    digit |= std::isdigit(u) != 0;
    slashes += c == '/';
  }
  if (slashes > 2) return false;  // a relative path, not base64 of a key
  const int classes = int(up) + int(low) + int(digit);
  if (classes == 1 && digit) return false;  // a number
  if (t.size() >= 24 && classes >= 2 && slashes == 0) return true;
  if (t.size() >= 32 && classes >= 3) return true;
  // Long single-class tokens (lowercase keys): words repeat letters, keys don't.
  const double h = entropy_bits_per_char(t);
  return (t.size() >= 32 && h >= 3.9) || (t.size() >= 20 && h >= 4.2);
}

bool has_random_token(std::string_view v) {
  size_t i = 0;
  while (i < v.size()) {
    while (i < v.size() && !token_char(v[i])) ++i;
    size_t j = i;
    while (j < v.size() && token_char(v[j])) ++j;
    if (j > i && looks_random(v.substr(i, j - i))) return true;
    i = j;
  }
  return false;
}

bool has_known_prefix(std::string_view v) {
  size_t i = 0;
  while (i < v.size()) {
    while (i < v.size() && !token_char(v[i])) ++i;
    size_t j = i;
    while (j < v.size() && token_char(v[j])) ++j;
    const std::string_view t = v.substr(i, j - i);
    for (std::string_view p : {"AKIA", "ASIA", "ghp_", "gho_", "ghs_", "ghu_", "github_pat_", "xoxb-", "xoxp-", "xoxa-",
                               "eyJ", "sk-", "hf_", "glpat-", "npm_", "pypi-"})
      if (starts_with(t, p) && t.size() >= p.size() + 8) return true;
    i = j;
  }
  return false;
}

}  // namespace

bool secret_name(std::string_view name) {
  const std::string u = upper(name);
  return secret_word(u) && !known_harmless_name(u);
}

bool secret_value(std::string_view v) {
  return has_userinfo(v) || has_http_credential(v) || has_secret_assignment(v) || has_known_prefix(v) ||
         has_random_token(v);
}

std::string redact_env_value(std::string_view name, std::string_view value) {
  if (secret_name(name) || secret_value(value)) return kRedactedValue;
  return std::string(value);
}

}  // namespace ccdiag
