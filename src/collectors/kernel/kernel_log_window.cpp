#include "collectors/kernel/kernel_log_window.hpp"

#include <algorithm>
#include <charconv>
#include <ctime>

#include <nlohmann/json.hpp>

namespace ccdiag {

namespace {

std::optional<int64_t> to_i64(std::string_view v) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size()) return std::nullopt;
  return n;
}

// Seconds past this are not a time ccdiag will see (year 4147): refusing them
// keeps every µs product below in range (--since 777777777777777d overflowed).
constexpr int64_t kMaxSeconds = int64_t(1) << 36;

// sec * 10^6 + us, or nullopt when it would leave the sane range.
std::optional<int64_t> to_us(int64_t sec, int64_t us) {
  if (sec < -kMaxSeconds || sec > kMaxSeconds || us < 0 || us > 999999999) return std::nullopt;
  return sec * 1000000 + us;
}

// Time of one line in µs: since boot (`boot_relative` true) or since the epoch.
std::optional<int64_t> line_time_us(std::string_view line, bool& boot_relative) {
  boot_relative = false;
  if (!line.empty() && line.front() == '{') {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("__REALTIME_TIMESTAMP") && j["__REALTIME_TIMESTAMP"].is_string())
    {
      const auto v = to_i64(j["__REALTIME_TIMESTAMP"].get<std::string>());
      if (v && (*v < -kMaxSeconds * 1000000 || *v > kMaxSeconds * 1000000)) return std::nullopt;
      return v;
    }
    return std::nullopt;
  }
  if (!line.empty() && line.front() >= '0' && line.front() <= '9') {  // kmsg "<prio>,<seq>,<usec>,<flags>;"
    const size_t semi = line.find(';');
    if (semi == std::string_view::npos) return std::nullopt;
    std::string_view hdr = line.substr(0, semi);
    const size_t c1 = hdr.find(','), c2 = c1 == std::string_view::npos ? c1 : hdr.find(',', c1 + 1);
    if (c2 == std::string_view::npos) return std::nullopt;
    const size_t c3 = hdr.find(',', c2 + 1);
    boot_relative = true;
    return to_i64(hdr.substr(c2 + 1, (c3 == std::string_view::npos ? hdr.size() : c3) - c2 - 1));
  }
  if (!line.empty() && line.front() == '[') {  // dmesg "[  123.456789] "
    const size_t close = line.find(']');
    if (close == std::string_view::npos || close > 24) return std::nullopt;
    std::string_view v = line.substr(1, close - 1);
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    const size_t dot = v.find('.');
    const auto sec = to_i64(v.substr(0, dot));
    if (!sec) return std::nullopt;
    int64_t us = 0;
    if (dot != std::string_view::npos) {
      std::string_view frac = v.substr(dot + 1, 6);
      const auto f = to_i64(frac);
      if (!f) return std::nullopt;
      us = *f;
      for (size_t i = frac.size(); i < 6; ++i) us *= 10;
    }
    boot_relative = true;
    return to_us(*sec, us);
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> parse_since(std::string_view t, int64_t now) {
  if (t.empty()) return std::nullopt;
  if (t.front() == '@') {
    const auto v = to_i64(t.substr(1));
    if (!v || *v < 0 || *v > kMaxSeconds) return std::nullopt;
    return v;
  }
  const char unit = t.back();
  if (unit == 's' || unit == 'm' || unit == 'h' || unit == 'd') {
    const auto n = to_i64(t.substr(0, t.size() - 1));
    if (!n || *n < 0) return std::nullopt;
    const int64_t mult = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400;
    // Further back than the epoch is a typo, not a window.
    if (now < 0 || *n > now / mult) return std::nullopt;
    return now - *n * mult;
  }
  // ISO-8601 UTC, 'T' or ' ' between date and time, optional trailing Z.
  if (t.back() == 'Z') t.remove_suffix(1);
  if (t.size() != 19 || (t[10] != 'T' && t[10] != ' ')) return std::nullopt;
  std::tm tm{};
  auto num = [&](size_t at, size_t len) { return to_i64(t.substr(at, len)); };
  const auto Y = num(0, 4), Mo = num(5, 2), D = num(8, 2), h = num(11, 2), mi = num(14, 2), s = num(17, 2);
  if (!Y || !Mo || !D || !h || !mi || !s || t[4] != '-' || t[7] != '-' || t[13] != ':' || t[16] != ':') return std::nullopt;
  if (*Y < 1970 || *Y > 9999 || *Mo < 1 || *Mo > 12 || *D < 1 || *D > 31 || *h > 23 || *mi > 59 || *s > 60) return std::nullopt;
  tm.tm_year = static_cast<int>(*Y - 1900);
  tm.tm_mon = static_cast<int>(*Mo - 1);
  tm.tm_mday = static_cast<int>(*D);
  tm.tm_hour = static_cast<int>(*h);
  tm.tm_min = static_cast<int>(*mi);
  tm.tm_sec = static_cast<int>(*s);
  // A year past 4147 is beyond kMaxSeconds like "@" times are (the fuzzer's
  // "9025-05-30T04:00:00Z"): refused, not scaled out of range later.
  const auto at = static_cast<int64_t>(::timegm(&tm));
  if (at < 0 || at > kMaxSeconds) return std::nullopt;
  return at;
}

std::optional<int64_t> boot_time_from_proc_stat(std::string_view stat) {
  const size_t at = stat.find("btime ");
  if (at == std::string_view::npos || (at != 0 && stat[at - 1] != '\n')) return std::nullopt;
  std::string_view v = stat.substr(at + 6);
  v = v.substr(0, v.find('\n'));
  return to_i64(v);
}

WindowedLog filter_kernel_log_since(std::string_view text, int64_t since, std::optional<int64_t> boot) {
  WindowedLog out;
  const int64_t since_us = to_us(std::clamp(since, -kMaxSeconds, kMaxSeconds), 0).value_or(0);
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    bool rel = false;
    auto t = line_time_us(line, rel);
    if (t && rel) {
      // Both parts come from files (a --root tree, a bundle): checked, not trusted.
      const auto base = boot ? to_us(*boot, 0) : std::nullopt;
      t = base && *t >= 0 && *t <= kMaxSeconds * 1000000 ? std::optional<int64_t>(*base + *t) : std::nullopt;
    }
    if (!t) {
      ++out.untimed;
    } else if (*t < since_us) {
      ++out.dropped;
      continue;
    }
    ++out.kept;
    out.text.append(line);
    out.text.push_back('\n');
  }
  return out;
}

}  // namespace ccdiag
