#include "ccdiag/line_prefix.hpp"

#include <cctype>
#include <charconv>
#include <ctime>
#include <utility>

namespace ccdiag::logs {

namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

std::optional<int64_t> num(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// Parses fixed-width digits at s[i..i+n).
bool fixed(std::string_view s, size_t i, size_t n, int& out) {
  if (i + n > s.size()) return false;
  int v = 0;
  for (size_t k = i; k < i + n; ++k) {
    if (!digit(s[k])) return false;
    v = v * 10 + (s[k] - '0');
  }
  out = v;
  return true;
}

// Fractional seconds after s[i] == '.' or ','; returns chars consumed.
size_t frac(std::string_view s, size_t i, double& out) {
  if (i >= s.size() || (s[i] != '.' && s[i] != ',')) return 0;
  size_t k = i + 1;
  double scale = 0.1, v = 0;
  while (k < s.size() && digit(s[k])) {
    v += (s[k] - '0') * scale;
    scale /= 10;
    ++k;
  }
  out = v;
  return k - i;
}

// "YYYY-MM-DD[T ]hh:mm:ss[.frac][Z|+hh:mm]" at the start of s; returns its length.
size_t iso_time(std::string_view s, double& key) {
  int Y, M, D, h, m, sec;
  if (!fixed(s, 0, 4, Y) || s.size() < 19 || s[4] != '-' || !fixed(s, 5, 2, M) || s[7] != '-' ||
      !fixed(s, 8, 2, D) || (s[10] != 'T' && s[10] != ' ') || !fixed(s, 11, 2, h) || s[13] != ':' ||
      !fixed(s, 14, 2, m) || s[16] != ':' || !fixed(s, 17, 2, sec))
    return 0;
  size_t n = 19;
  double f = 0;
  n += frac(s, n, f);
  if (n < s.size() && s[n] == 'Z') ++n;
  else if (n + 6 <= s.size() && (s[n] == '+' || s[n] == '-') && digit(s[n + 1]) && s[n + 3] == ':') n += 6;
  else if (n + 5 <= s.size() && (s[n] == '+' || s[n] == '-') && digit(s[n + 1]) && digit(s[n + 2]) &&
           digit(s[n + 3]) && digit(s[n + 4]))
    n += 5;  // "+0000": journalctl -o short-iso
  std::tm tm{};
  tm.tm_year = Y - 1900;
  tm.tm_mon = M - 1;
  tm.tm_mday = D;
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = sec;
  key = static_cast<double>(timegm(&tm)) + f;
  return n;
}

// glog: "E1201 10:00:00.123456 4242 file.cpp:12" inside brackets.
bool glog_time(std::string_view s, double& key) {
  int M, D, h, m, sec;
  if (s.size() < 14 || !(s[0] == 'E' || s[0] == 'W' || s[0] == 'I' || s[0] == 'F') || !fixed(s, 1, 2, M) ||
      !fixed(s, 3, 2, D) || s[5] != ' ' || !fixed(s, 6, 2, h) || s[8] != ':' || !fixed(s, 9, 2, m) ||
      s[11] != ':' || !fixed(s, 12, 2, sec))
    return false;
  double f = 0;
  frac(s, 14, f);
  static constexpr int kDays[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  const int month = M >= 1 && M <= 12 ? M : 1;
  key = ((kDays[month - 1] + D - 1) * 24.0 + h) * 3600 + m * 60 + sec + f;
  return true;
}

// syslog "Nov 30 05:00:00 host proc[pid]: "; returns the length consumed.
size_t syslog_time(std::string_view s, double& key) {
  static constexpr std::string_view kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  if (s.size() < 16 || s[3] != ' ') return 0;
  const size_t mi = kMonths.find(s.substr(0, 3));
  if (mi == std::string_view::npos || mi % 3 != 0) return 0;
  int D = 0, h, m, sec;
  const size_t d0 = s[4] == ' ' ? 5 : 4;
  if (!fixed(s, d0, s[4] == ' ' ? 1 : 2, D)) return 0;
  const size_t t = 7;
  if (!fixed(s, t, 2, h) || s[t + 2] != ':' || !fixed(s, t + 3, 2, m) || s[t + 5] != ':' || !fixed(s, t + 6, 2, sec))
    return 0;
  // The host and the tag ("kernel:", "python[123]:") follow.
  const size_t host_end = s.find(' ', 16);
  if (host_end == std::string_view::npos) return 0;
  const size_t tag_end = s.find(": ", host_end + 1);
  if (tag_end == std::string_view::npos || tag_end - host_end > 64) return 0;
  static constexpr int kDays[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  key = ((kDays[mi / 3] + D - 1) * 24.0 + h) * 3600 + m * 60 + sec;
  return tag_end + 2;
}

// "rank12", "trainer0|0", "worker3" -> rank.
std::optional<int> launcher_rank(std::string_view inner) {
  for (std::string_view word : {std::string_view("rank"), std::string_view("trainer"), std::string_view("worker")}) {
    if (inner.substr(0, word.size()) != word) continue;
    std::string_view rest = inner.substr(word.size());
    const size_t bar = rest.find('|');
    if (bar != std::string_view::npos) rest = rest.substr(0, bar);
    if (auto v = num(rest); v && *v < 10'000'000) return static_cast<int>(*v);
  }
  return std::nullopt;
}

bool is_local_tag(std::string_view inner) {
  // torchrun --tee role tags: "[default0]:". The number is a local rank, so
  // it is not a rank; strip it so the message is seen.
  size_t i = 0;
  while (i < inner.size() && std::isalpha(static_cast<unsigned char>(inner[i]))) ++i;
  if (i == 0 || i == inner.size()) return false;
  while (i < inner.size() && digit(inner[i])) ++i;
  return i == inner.size();
}

// grep -r output: "path:" or "path:NNN:" (grep -n), "path-NNN-" for context
// lines. The path has no blank, and names a file (a '/' or a log-like
// extension) so a NCCL "host:pid:tid " prefix is never taken for one.
size_t grep_prefix(std::string_view s) {
  const size_t stop = s.find_first_of(": ");
  if (stop == std::string_view::npos || stop == 0 || stop > 200 || s[stop] != ':') return 0;
  const std::string_view path = s.substr(0, stop);
  // Most lines reach here with a NCCL "host" or a word before the colon:
  // neither a '/' nor a '.' in it, so no file. Checked first (every line pays it).
  if (path.find_first_of("/.") == std::string_view::npos) return 0;
  bool file = path.find('/') != std::string_view::npos;
  for (std::string_view ext : {".log", ".txt", ".out", ".err", ".gz", ".stderr", ".stdout"}) {
    if (file) break;
    if (path.size() > ext.size() && path.substr(path.size() - ext.size()) == ext) file = true;
    // "job.log-2" (a rotated file) or grep's "path-NNN-" context form.
    for (size_t at = path.find(ext); !file && at != std::string_view::npos; at = path.find(ext, at + 1))
      if (at + ext.size() < path.size() && path[at + ext.size()] == '-') file = true;
  }
  if (!file || path.find("://") != std::string_view::npos) return 0;
  // A source location ("transport/net_ib.cc:1234 NCCL WARN") is part of the message.
  for (std::string_view ext : {".cc", ".cpp", ".c", ".h", ".hpp", ".cu", ".py", ".pyx"})
    if (path.size() > ext.size() && path.substr(path.size() - ext.size()) == ext) return 0;
  size_t n = stop + 1;
  size_t k = n;
  while (k < s.size() && digit(s[k])) ++k;
  // "path:NNN:" is grep -n's line number; otherwise the line itself may start
  // with digits ("path:001d", a register value a paste printed).
  if (k > n && k < s.size() && s[k] == ':') n = k + 1;
  return n;
}

// docker compose: "<service>-<n>  | " (name, blanks, a bar, a blank).
size_t compose_prefix(std::string_view s) {
  size_t k = 0;
  while (k < s.size() && (std::isalnum(static_cast<unsigned char>(s[k])) || s[k] == '-' || s[k] == '_' || s[k] == '.'))
    ++k;
  if (k == 0 || k > 64) return 0;
  size_t b = k;
  while (b < s.size() && s[b] == ' ') ++b;
  if (b == k || b + 1 >= s.size() || s[b] != '|' || s[b + 1] != ' ') return 0;
  return b + 2;
}

// Ray's per-actor prefix: "(Name pid=123) " or "(Name pid=123, ip=10.0.0.1) ".
size_t ray_prefix(std::string_view s) {
  if (s.size() < 8 || s.front() != '(') return 0;
  const size_t close = s.find(')');
  if (close == std::string_view::npos || close > 160) return 0;
  const std::string_view inner = s.substr(1, close - 1);
  if (inner.find(" pid=") == std::string_view::npos && inner.rfind("pid=", 0) != 0) return 0;
  size_t n = close + 1;
  while (n < s.size() && s[n] == ' ') ++n;
  return n;
}

// A logging-module prefix: "LEVEL MM-DD hh:mm:ss file.py:NN] " (vLLM, sglang).
size_t level_date_prefix(std::string_view s) {
  size_t k = 0;
  for (std::string_view lv : {"ERROR ", "WARNING ", "INFO ", "DEBUG ", "CRITICAL "})
    if (s.substr(0, lv.size()) == lv) k = lv.size();
  int v;
  if (k == 0 || !fixed(s, k, 2, v) || k + 14 > s.size() || s[k + 2] != '-' || !fixed(s, k + 3, 2, v) ||
      s[k + 5] != ' ' || !fixed(s, k + 6, 2, v) || s[k + 8] != ':')
    return 0;
  const size_t close = s.find("] ", k + 14);
  if (close == std::string_view::npos || close > k + 80) return 0;
  return close + 2;
}

// After an ISO timestamp: the CRI logging format kubelet writes under
// /var/log/pods ("<time> stdout|stderr F|P <line>"); returns the length of
// the stream and tag.
size_t cri_stream_tag(std::string_view s) {
  for (std::string_view st : {std::string_view("stdout "), std::string_view("stderr ")})
    if (s.substr(0, st.size()) == st && s.size() >= st.size() + 2 && (s[st.size()] == 'F' || s[st.size()] == 'P') &&
        s[st.size() + 1] == ' ')
      return st.size() + 2;
  return 0;
}

// After an ISO timestamp: a journal or rsyslog file line's "host tag[pid]: "
// (journalctl -o short-iso, RSYSLOG_FileFormat). The tag must carry a pid or
// be "kernel:", so a logging format's "INFO name: " stays in the message.
size_t iso_syslog_host_tag(std::string_view s) {
  const size_t host_end = s.find(' ');
  if (host_end == std::string_view::npos || host_end == 0 || host_end > 64) return 0;
  if (s.substr(0, host_end).find(':') != std::string_view::npos) return 0;
  const std::string_view rest = s.substr(host_end + 1);
  if (rest.substr(0, 8) == "kernel: ") return host_end + 1 + 8;
  const size_t open = rest.find('[');
  if (open == std::string_view::npos || open == 0 || open > 64) return 0;
  for (size_t k = 0; k < open; ++k)
    if (rest[k] == ' ' || rest[k] == ':') return 0;
  size_t k = open + 1;
  while (k < rest.size() && digit(rest[k])) ++k;
  if (k == open + 1 || k + 2 >= rest.size() || rest[k] != ']' || rest[k + 1] != ':' || rest[k + 2] != ' ') return 0;
  return host_end + 1 + k + 3;
}

// pdsh / clush: "node017: " before each line of a remote command's output.
// A host name: lower-case letters, digits, '-', '.', '_', starting with a
// letter and holding a digit (cluster nodes are numbered); network devices
// and kernel subsystems that print "name: " themselves are not hosts.
size_t host_tag_prefix(std::string_view s) {
  if (s.empty() || !(s[0] >= 'a' && s[0] <= 'z')) return 0;
  size_t k = 0;
  bool has_digit = false;
  while (k < s.size() && k <= 64 &&
         ((s[k] >= 'a' && s[k] <= 'z') || digit(s[k]) || s[k] == '-' || s[k] == '.' || s[k] == '_')) {
    has_digit = has_digit || digit(s[k]);
    ++k;
  }
  if (!has_digit || k < 3 || k > 64 || k + 1 >= s.size() || s[k] != ':' || s[k + 1] != ' ') return 0;
  const std::string_view name = s.substr(0, k);
  for (std::string_view dev : {"eth", "ib", "enp", "ens", "eno", "enx", "bond", "mlx", "nvme", "sd", "veth", "wl", "nvidia",
                               "docker", "virbr", "cuda", "rank", "gpu_", "step", "epoch", "iter"})
    if (name.substr(0, dev.size()) == dev && (dev != "sd" || (k >= 3 && name[2] >= 'a' && name[2] <= 'z')))
      return 0;
  return k + 2;
}

// mpirun --tag-output "[job,rank]<stdout|stderr|stddiag>:" -> (rank, chars of the tag after ']').
std::pair<std::optional<int>, size_t> mpirun_rank(std::string_view inner, std::string_view after) {
  const size_t comma = inner.find(',');
  if (comma == std::string_view::npos || !num(inner.substr(0, comma))) return {std::nullopt, 0};
  const auto r = num(inner.substr(comma + 1));
  if (!r || *r > 10'000'000) return {std::nullopt, 0};
  size_t n = 1;  // counts the ']' already consumed by the caller's `after`
  if (!after.empty() && after.front() == '<') {
    const size_t gt = after.find('>');
    if (gt == std::string_view::npos || gt > 10) return {std::nullopt, 0};
    n += gt + 1;
  }
  return {static_cast<int>(*r), n};
}

}  // namespace

LinePrefix parse_line_prefix(std::string_view line) {
  LinePrefix p;
  std::string_view s = line;
  for (int round = 0; round < 10 && !s.empty(); ++round) {
    // Pasted into Markdown or indented under a heading: "> ", "    ", tabs.
    if (s.front() == ' ' || s.front() == '\t' || s.front() == '>') {
      size_t k = 0;
      while (k < s.size() && (s[k] == ' ' || s[k] == '\t' || s[k] == '>')) ++k;
      s.remove_prefix(k);
      continue;
    }
    if (size_t n = grep_prefix(s); n > 0) {  // grep -r / -rn: "path:" or "path:NNN:"
      s.remove_prefix(n);
      continue;
    }
    if (size_t n = compose_prefix(s); n > 0) {  // docker compose "svc-1  | "
      s.remove_prefix(n);
      continue;
    }
    if (size_t n = ray_prefix(s); n > 0) {  // Ray actor "(RayWorkerVllm pid=4028887) "
      s.remove_prefix(n);
      continue;
    }
    if (size_t n = level_date_prefix(s); n > 0) {  // vLLM / logging "ERROR 03-28 21:38:23 file.py:44] "
      s.remove_prefix(n);
      continue;
    }
    // pdsh / clush "node017: " comes first on the line; later, after a dmesg
    // or syslog time, "nvidia-nvswitch0: " is a kernel device.
    if (size_t n = round == 0 ? host_tag_prefix(s) : 0; n > 0) {
      s.remove_prefix(n);
      continue;
    }
    if (s.front() == '[') {
      const size_t close = s.find(']');
      if (close == std::string_view::npos || close > 96) break;
      std::string_view inner = s.substr(1, close - 1);
      size_t after = close + 1;
      double key = 0;
      if (auto r = launcher_rank(inner)) {
        p.rank = r;
      } else if (auto mr = mpirun_rank(inner, s.substr(after)); mr.second > 0) {
        // mpirun --tag-output "[1,3]<stderr>:": job 1, rank 3.
        if (mr.first) p.rank = mr.first;
        after += mr.second - 1;
      } else if (inner.find('/') != std::string_view::npos && inner.find(' ') == std::string_view::npos) {
        // kubectl logs --prefix "[pod/name/container] ": nothing to record
      } else if (is_local_tag(inner)) {
        // local-rank tag: nothing to record
      } else if (size_t n = iso_time(inner, key); n > 0) {
        p.timestamp = inner;
        p.time_kind = TimeKind::wall;
        p.time_key = key;
      } else if (glog_time(inner, key)) {
        p.timestamp = inner.substr(0, inner.find(' ', 6) == std::string_view::npos ? inner.size() : inner.find(' ', 6));
        p.time_kind = TimeKind::glog;
        p.time_key = key;
      } else {
        // dmesg "[ 1234.567890]"
        std::string_view t = inner;
        while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
        size_t k = 0;
        while (k < t.size() && digit(t[k])) ++k;
        if (k == 0 || k >= t.size() || t[k] != '.') break;
        double f = 0;
        const size_t fl = frac(t, k, f);
        if (k + fl != t.size()) break;
        p.timestamp = t;
        p.time_kind = TimeKind::uptime;
        p.time_key = static_cast<double>(*num(t.substr(0, k))) + f;
      }
      if (after < s.size() && s[after] == ':') ++after;
      if (after < s.size() && s[after] == ' ') ++after;
      s.remove_prefix(after);
      continue;
    }
    if (digit(s.front())) {
      double key = 0;
      if (size_t n = iso_time(s, key); n > 0) {
        p.timestamp = s.substr(0, n);
        p.time_kind = TimeKind::wall;
        p.time_key = key;
        s.remove_prefix(n);
        while (!s.empty() && (s.front() == ' ' || s.front() == '|')) s.remove_prefix(1);
        if (size_t t = cri_stream_tag(s); t > 0) s.remove_prefix(t);           // kubelet CRI log file
        else if (size_t h = iso_syslog_host_tag(s); h > 0) s.remove_prefix(h);  // journal / rsyslog file
        continue;
      }
      // srun -l / pdsh style "3: " — but not a NCCL "host:pid:tid" whose host is numeric.
      size_t k = 0;
      while (k < s.size() && digit(s[k])) ++k;
      if (k <= 6 && k + 1 < s.size() && s[k] == ':' && s[k + 1] == ' ') {
        p.rank = static_cast<int>(*num(s.substr(0, k)));
        s.remove_prefix(k + 2);
        continue;
      }
      break;
    }
    if (std::isupper(static_cast<unsigned char>(s.front()))) {
      double key = 0;
      if (size_t n = syslog_time(s, key); n > 0) {
        p.timestamp = s.substr(0, 15);
        p.time_kind = TimeKind::glog;  // month/day/time without year: same clock as glog
        p.time_key = key;
        s.remove_prefix(n);
        continue;
      }
    }
    break;
  }
  p.body = s;

  // NCCL prefix "host:pid:tid " (host: no spaces, no ':').
  const size_t c1 = s.find(':');
  if (c1 != std::string_view::npos && c1 > 0 && c1 < 128 && s.substr(0, c1).find(' ') == std::string_view::npos) {
    const size_t c2 = s.find(':', c1 + 1);
    const size_t sp = s.find(' ', c1 + 1);
    if (c2 != std::string_view::npos && sp != std::string_view::npos && c2 < sp) {
      auto pid = num(s.substr(c1 + 1, c2 - c1 - 1));
      auto tid = num(s.substr(c2 + 1, sp - c2 - 1));
      if (pid && tid) {
        p.host = s.substr(0, c1);
        p.pid = pid;
        p.tid = tid;
        std::string_view rest = s.substr(sp + 1);
        if (rest.size() > 2 && rest.front() == '[') {
          const size_t close = rest.find(']');
          if (close != std::string_view::npos && close < 8)
            if (auto d = num(rest.substr(1, close - 1))) p.dev = static_cast<int>(*d);
        }
        const size_t nccl = rest.find("NCCL ");
        if (nccl != std::string_view::npos && nccl < 200) {
          std::string_view lv = rest.substr(nccl + 5, 5);
          for (std::string_view w : {"INFO", "WARN", "TRACE", "CALL"})
            if (lv.substr(0, w.size()) == w) p.level = rest.substr(nccl + 5, w.size());
        }
      }
    }
  }
  return p;
}

void strip_ansi(std::string& s) {
  size_t w = 0;
  for (size_t r = 0; r < s.size();) {
    if (s[r] != '\x1b') {
      s[w++] = s[r++];
      continue;
    }
    ++r;
    if (r >= s.size()) break;
    if (s[r] == '[') {  // CSI: parameters and intermediates, then a final byte 0x40..0x7e
      ++r;
      while (r < s.size() && !(s[r] >= 0x40 && s[r] <= 0x7e)) ++r;
      if (r < s.size()) ++r;
    } else if (s[r] == ']') {  // OSC: until BEL or ESC '\'
      ++r;
      while (r < s.size() && s[r] != '\x07' && !(s[r] == '\x1b' && r + 1 < s.size() && s[r + 1] == '\\')) ++r;
      if (r < s.size()) r += s[r] == '\x07' ? 1 : 2;
    } else {
      ++r;  // two-byte escape
    }
  }
  s.resize(w);
}

std::optional<int> rank_from_filename(std::string_view name) {
  const size_t slash = name.find_last_of('/');
  if (slash != std::string_view::npos) name = name.substr(slash + 1);
  for (std::string_view word : {std::string_view("rank"), std::string_view("worker"), std::string_view("trainer")}) {
    const size_t at = name.find(word);
    if (at == std::string_view::npos) continue;
    size_t k = at + word.size();
    while (k < name.size() && (name[k] == '_' || name[k] == '-' || name[k] == '.')) ++k;
    size_t e = k;
    while (e < name.size() && digit(name[e])) ++e;
    if (e > k && e - k <= 7) return static_cast<int>(*num(name.substr(k, e - k)));
  }
  return std::nullopt;
}

}  // namespace ccdiag::logs
