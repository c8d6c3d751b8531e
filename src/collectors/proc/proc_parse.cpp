#include "collectors/proc/proc_parse.hpp"
#include "sys/redact.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace ccdiag {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits on runs of spaces.
std::vector<std::string_view> fields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
    const size_t b = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\n') ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

template <class T>
bool to_num(std::string_view s, T& v, int base = 10) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool to_hex_addr(std::string_view s, uint64_t& v) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  return to_num(s, v, 16);
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string_view basename(std::string_view p) {
  const size_t slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  ProcStat st;
  if (!to_num(trim(text.substr(0, open)), st.pid)) return std::nullopt;
  st.comm = std::string(text.substr(open + 1, close - open - 1));
  const auto f = fields(text.substr(close + 1));
  // f[0] is field 3 (state); field N is f[N - 3].
  if (f.size() < 2 || f[0].size() != 1) return std::nullopt;
  st.state = f[0][0];
  if (!to_num(f[1], st.ppid)) return std::nullopt;
  if (f.size() > 12) {
    to_num(f[11], st.utime);
    to_num(f[12], st.stime);
  }
  if (f.size() > 17) to_num(f[17], st.num_threads);
  if (f.size() > 19) to_num(f[19], st.starttime);
  if (f.size() > 6) to_num(f[6], st.flags);
  if (int64_t x = 0; f.size() > 49 && to_num(f[49], x)) st.exit_status = x;
  return st;
}

std::vector<std::pair<std::string, std::string>> parse_status(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    out.emplace_back(std::string(line.substr(0, colon)), std::string(trim(line.substr(colon + 1))));
  }
  return out;
}

std::optional<std::string> status_value(const std::vector<std::pair<std::string, std::string>>& kv,
                                        std::string_view key) {
  for (const auto& [k, v] : kv)
    if (k == key) return v;
  return std::nullopt;
}

std::vector<MapEntry> parse_maps(std::string_view text, size_t* skipped) {
  std::vector<MapEntry> out;
  size_t bad = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (trim(line).empty()) continue;
    // The path is everything after the 5th field and its padding; it may
    // contain spaces ("/tmp/a b.so", " (deleted)").
    size_t pos = 0;
    std::string_view f[5];
    bool ok = true;
    for (auto& fld : f) {
      while (pos < line.size() && line[pos] == ' ') ++pos;
      const size_t b = pos;
      while (pos < line.size() && line[pos] != ' ') ++pos;
      fld = line.substr(b, pos - b);
      if (fld.empty()) ok = false;
    }
    MapEntry m;
    const size_t dash = f[0].find('-');
    if (!ok || dash == std::string_view::npos || !to_hex_addr(f[0].substr(0, dash), m.start) ||
        !to_hex_addr(f[0].substr(dash + 1), m.end) || m.end < m.start || f[1].size() != 4 ||
        !to_hex_addr(f[2], m.offset) || !to_num(f[4], m.inode)) {
      ++bad;
      continue;
    }
    m.perms = std::string(f[1]);
    while (pos < line.size() && line[pos] == ' ') ++pos;
    m.path = std::string(line.substr(pos));
    out.push_back(std::move(m));
  }
  if (skipped) *skipped = bad;
  return out;
}

std::optional<SyscallLine> parse_syscall_line(std::string_view text) {
  text = trim(text);
  SyscallLine s;
  if (text == "running") {
    s.running = true;
    return s;
  }
  const auto f = fields(text);
  if (f.size() == 3 && f[0] == "-1") {
    s.nr = -1;
    if (!to_hex_addr(f[1], s.sp) || !to_hex_addr(f[2], s.pc)) return std::nullopt;
    return s;
  }
  if (f.size() != 9 || !to_num(f[0], s.nr) || s.nr < 0) return std::nullopt;
  for (int i = 0; i < 6; ++i)
    if (!to_hex_addr(f[1 + i], s.args[i])) return std::nullopt;
  if (!to_hex_addr(f[7], s.sp) || !to_hex_addr(f[8], s.pc)) return std::nullopt;
  return s;
}

std::vector<std::string> parse_kernel_stack(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const size_t close = line.find("] ");
    if (line.empty() || line.front() != '[' || close == std::string_view::npos) continue;
    std::string_view fn = line.substr(close + 2);
    fn = fn.substr(0, fn.find('+'));
    if (!fn.empty()) out.emplace_back(fn);
  }
  return out;
}

std::string syscall_name(int64_t nr) {
#if defined(__aarch64__)
  switch (nr) {
    case 63: return "read";
    case 98: return "futex";
    case 22: return "epoll_pwait";
    case 73: return "ppoll";
    case 72: return "pselect6";
    case 207: return "recvfrom";
    case 212: return "recvmsg";
    case 115: return "clock_nanosleep";
    case 101: return "nanosleep";
    case 137: return "rt_sigtimedwait";
    case 220: return "clone";
    case 435: return "clone3";
    case 128: return "restart_syscall";
    case 29: return "ioctl";
    case 260: return "wait4";
    case 202: return "accept";
    case 242: return "accept4";
    case 203: return "connect";
    case 426: return "io_uring_enter";
    case 449: return "futex_waitv";
  }
#else
  switch (nr) {
    case 0: return "read";
    case 1: return "write";
    case 7: return "poll";
    case 16: return "ioctl";
    case 23: return "select";
    case 34: return "pause";
    case 35: return "nanosleep";
    case 42: return "connect";
    case 43: return "accept";
    case 45: return "recvfrom";
    case 47: return "recvmsg";
    case 56: return "clone";
    case 61: return "wait4";
    case 128: return "rt_sigtimedwait";
    case 202: return "futex";
    case 219: return "restart_syscall";
    case 230: return "clock_nanosleep";
    case 232: return "epoll_wait";
    case 270: return "pselect6";
    case 271: return "ppoll";
    case 281: return "epoll_pwait";
    case 288: return "accept4";
    case 426: return "io_uring_enter";
    case 435: return "clone3";
    case 441: return "epoll_pwait2";
    case 449: return "futex_waitv";
  }
#endif
  return "";
}

std::vector<std::pair<std::string, std::string>> parse_environ(std::string_view bytes) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!bytes.empty()) {
    const size_t nul = bytes.find('\0');
    std::string_view e = bytes.substr(0, nul);
    bytes = nul == std::string_view::npos ? std::string_view{} : bytes.substr(nul + 1);
    const size_t eq = e.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    out.emplace_back(std::string(e.substr(0, eq)), std::string(e.substr(eq + 1)));
  }
  return out;
}

bool env_name_allowed(std::string_view n) {
  // Only identifier bytes: a name with other bytes is not one of ours, and
  // would make the JSON invalid UTF-8 (found by fuzz/proc_parse_fuzz.cpp).
  for (char c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  static constexpr std::string_view exact[] = {"RANK",          "LOCAL_RANK",          "WORLD_SIZE",
                                               "LOCAL_WORLD_SIZE", "GROUP_RANK",       "TORCHELASTIC_RUN_ID",
                                               "MASTER_ADDR",   "MASTER_PORT",         "CUDA_VISIBLE_DEVICES"};
  for (auto e : exact)
    if (n == e) return true;
  return starts_with(n, "SLURM_") || starts_with(n, "OMPI_COMM_WORLD_") || starts_with(n, "NCCL_");
}

// The rules live in sys/redact.hpp (by name and by value), shared by every
// output path.
bool looks_like_credential(std::string_view name, std::string_view value) {
  return secret_name(name) || secret_value(value);
}

nlohmann::json filter_environment(const std::vector<std::pair<std::string, std::string>>& env) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : env) {
    if (!env_name_allowed(k)) continue;
    // Values are user data: keep them valid UTF-8 for JSON by dropping bytes >= 0x80.
    std::string clean;
    for (char c : v)
      if (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f) clean += c;
    out[k] = looks_like_credential(k, v) || looks_like_credential(k, clean) ? std::string(kRedacted) : clean;
  }
  return out;
}

MappedLibraries mapped_libraries(const std::vector<MapEntry>& maps) {
  MappedLibraries lib;
  for (const auto& m : maps) {
    std::string_view path = m.path;
    if (path.empty() || path.front() != '/') continue;
    if (const size_t del = path.find(" (deleted)"); del != std::string_view::npos) path = path.substr(0, del);
    const std::string_view base = basename(path);
    if (starts_with(base, "libnccl.so")) {
      if (lib.nccl_path.empty()) lib.nccl_path = std::string(path);
      std::string_view v = base.substr(std::string_view("libnccl.so").size());
      if (!v.empty() && v.front() == '.') {
        v.remove_prefix(1);
        if (std::count(v.begin(), v.end(), '.') >= 2 && v.find_first_not_of("0123456789.") == std::string_view::npos)
          lib.nccl_version = std::string(v);
      }
    } else if (starts_with(base, "libtorch") || starts_with(base, "libc10")) {
      const std::string b(base);
      if (std::find(lib.torch_libs.begin(), lib.torch_libs.end(), b) == lib.torch_libs.end()) lib.torch_libs.push_back(b);
    } else if (starts_with(base, "libcuda.so")) {
      lib.cuda_driver = true;
    } else if (starts_with(base, "libpython") || starts_with(base, "python")) {
      lib.python = true;
    }
  }
  return lib;
}

std::optional<int> gpu_index_from_device_path(std::string_view path) {
  constexpr std::string_view p = "/dev/nvidia";
  if (!starts_with(path, p)) return std::nullopt;
  int idx = 0;
  if (!to_num(path.substr(p.size()), idx)) return std::nullopt;
  return idx;
}

}  // namespace ccdiag
