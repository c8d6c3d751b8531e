#include "collectors/python/walker.hpp"

#include <map>
#include <set>

#include <fmt/format.h>

#include "collectors/python/line_table.hpp"

namespace ccdiag::python {

namespace {

constexpr int kMaxInterps = 64;
constexpr int kMaxThreads = 4096;
constexpr int kMaxFrames = 4096;
constexpr int64_t kMaxStr = 4096;          // code points
constexpr int64_t kMaxTable = 1 << 20;     // line table bytes

template <class T>
std::optional<T> rd(const MemoryReader& m, uint64_t addr) {
  return RemotePtr<T>{addr}.read(m);
}

void put_utf8(std::string& s, uint32_t c) {
  if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;  // lone surrogate
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xc0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 63));
  } else if (c < 0x10000) {
    s += static_cast<char>(0xe0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 63));
    s += static_cast<char>(0x80 | (c & 63));
  } else if (c < 0x110000) {
    s += static_cast<char>(0xf0 | (c >> 18));
    s += static_cast<char>(0x80 | ((c >> 12) & 63));
    s += static_cast<char>(0x80 | ((c >> 6) & 63));
    s += static_cast<char>(0x80 | (c & 63));
  } else {
    s += "\xef\xbf\xbd";
  }
}

struct CodeInfo {
  std::string name, qualname, file, table;
  int firstlineno = 0;
};

}  // namespace

std::optional<std::string> read_str(const MemoryReader& m, uint64_t obj, const Layout& l) {
  if (!obj) return std::nullopt;
  auto len = rd<int64_t>(m, obj + l.str_length);
  auto state = rd<uint32_t>(m, obj + l.str_state);
  if (!len || !state || *len < 0) return std::nullopt;
  // GCC bit-field order: interned 0-1, kind 2-4, compact 5, ascii 6.
  const unsigned kind = (*state >> 2) & 7, compact = (*state >> 5) & 1, ascii = (*state >> 6) & 1;
  if (kind != 1 && kind != 2 && kind != 4) return std::nullopt;
  uint64_t data = 0;
  if (compact && ascii) {
    data = obj + l.str_ascii_data;
  } else if (compact) {
    data = obj + l.str_compact_data;
  } else {
    auto p = rd<uint64_t>(m, obj + l.str_compact_data);  // PyUnicodeObject.data
    if (!p || !*p) return std::nullopt;
    data = *p;
  }
  const int64_t n = std::min(*len, kMaxStr);
  std::vector<uint8_t> raw(static_cast<size_t>(n) * kind);
  if (!raw.empty() && !m.read_exact(data, raw.data(), raw.size())) return std::nullopt;
  std::string out;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t c = 0;
    if (kind == 1) c = raw[i];
    else if (kind == 2) c = raw[2 * i] | (raw[2 * i + 1] << 8);
    else c = raw[4 * i] | (raw[4 * i + 1] << 8) | (raw[4 * i + 2] << 16) | (uint32_t(raw[4 * i + 3]) << 24);
    put_utf8(out, c);
  }
  if (*len > kMaxStr) out += "...";
  return out;
}

namespace {

std::optional<CodeInfo> read_code(const MemoryReader& m, uint64_t code, const Layout& l) {
  CodeInfo ci;
  auto name = rd<uint64_t>(m, code + l.co_name);
  auto file = rd<uint64_t>(m, code + l.co_filename);
  auto table = rd<uint64_t>(m, code + l.co_linetable);
  auto first = rd<int32_t>(m, code + l.co_firstlineno);
  if (!name || !file || !table || !first) return std::nullopt;
  auto n = read_str(m, *name, l);
  auto f = read_str(m, *file, l);
  if (!n || !f) return std::nullopt;
  ci.name = *n;
  ci.file = *f;
  ci.qualname = ci.name;
  if (l.co_qualname >= 0)
    if (auto q = rd<uint64_t>(m, code + l.co_qualname))
      if (auto qs = read_str(m, *q, l)) ci.qualname = *qs;
  ci.firstlineno = *first;
  if (*table) {
    auto sz = rd<int64_t>(m, *table + l.bytes_size);
    if (sz && *sz > 0 && *sz <= kMaxTable) {
      ci.table.resize(static_cast<size_t>(*sz));
      if (!m.read_exact(*table + l.bytes_sval, ci.table.data(), ci.table.size())) ci.table.clear();
    }
  }
  return ci;
}

void walk_frames(const MemoryReader& m, const Layout& l, uint64_t tstate, PyThread& t,
                 std::map<uint64_t, std::optional<CodeInfo>>& codes) {
  auto first = rd<uint64_t>(m, tstate + l.ts_frame);
  if (!first) {
    t.error = "thread state unreadable";
    return;
  }
  uint64_t f = *first;
  if (f && l.cframe_current_frame >= 0) {  // 3.11/3.12: through _PyCFrame
    auto cf = rd<uint64_t>(m, f + l.cframe_current_frame);
    if (!cf) {
      t.error = "cframe unreadable";
      return;
    }
    f = *cf;
  }
  std::set<uint64_t> seen;
  bool next_is_entry_marker = false;  // 3.12+: a shim was just passed
  for (int n = 0; f && n < kMaxFrames; ++n) {
    if (!seen.insert(f).second) {
      t.error = "frame chain loops";
      return;
    }
    auto prev = rd<uint64_t>(m, f + l.fr_previous);
    auto code_raw = rd<uint64_t>(m, f + l.fr_code);
    if (!prev || !code_raw) {
      t.error = fmt::format("frame 0x{:x} unreadable", f);
      return;
    }
    bool is_entry = l.minor == 10;
    if (l.fr_owner >= 0 && l.minor >= 12) {
      auto owner = rd<uint8_t>(m, f + l.fr_owner);
      if (owner && *owner >= 3) {  // shim / interpreter-owned entry frame: not user code
        if (!t.frames.empty()) t.frames.back().is_entry = true;
        f = *prev;
        next_is_entry_marker = true;
        continue;
      }
    }
    if (l.fr_is_entry >= 0)
      if (auto e = rd<uint8_t>(m, f + l.fr_is_entry)) is_entry = *e != 0;
    const uint64_t code = l.code_is_tagged ? (*code_raw & ~uint64_t{3}) : *code_raw;
    if (!code) {
      f = *prev;
      continue;
    }
    auto it = codes.find(code);
    if (it == codes.end()) it = codes.emplace(code, read_code(m, code, l)).first;
    if (!it->second) {
      // 3.13+: f_executable may be a non-code object (None on shims): skip it.
      if (l.minor >= 13) {
        f = *prev;
        continue;
      }
      t.error = fmt::format("code object 0x{:x} unreadable", code);
      return;
    }
    const CodeInfo& ci = *it->second;
    PyFrame pf;
    pf.function = ci.qualname;
    pf.name = ci.name;
    pf.file = ci.file;
    pf.is_entry = is_entry;
    int line = -1;
    if (l.minor == 10) {
      auto lasti = rd<int32_t>(m, f + l.fr_instr);
      auto lineno = rd<int32_t>(m, f + l.fr_lineno);
      if (lineno && *lineno != 0) line = *lineno;  // only while tracing
      else if (lasti) line = line_for_offset_310(ci.table, ci.firstlineno, int64_t{*lasti} * 2);
    } else if (auto ip = rd<uint64_t>(m, f + l.fr_instr)) {
      const int64_t addrq = static_cast<int64_t>(*ip - (code + static_cast<uint64_t>(l.co_code_adaptive)));
      line = line_for_offset_311(ci.table, ci.firstlineno, addrq);
    }
    if (line >= 0) pf.line = line;
    t.frames.push_back(std::move(pf));
    f = *prev;
  }
  (void)next_is_entry_marker;
  // 3.12+: the oldest frame starts the first activation even without a shim below.
  if (l.minor >= 12 && !t.frames.empty()) t.frames.back().is_entry = true;
  if (f) t.error = fmt::format("more than {} frames: truncated", kMaxFrames);
}

}  // namespace

Result<std::vector<PyThread>> walk_runtime(const MemoryReader& m, uint64_t runtime, const Layout& l) {
  auto head = rd<uint64_t>(m, runtime + l.rt_interpreters_head);
  if (!head) return make_error("cannot read _PyRuntime.interpreters.head", fmt::format("0x{:x}", runtime));
  if (!*head) return make_error("no interpreter (runtime not initialised or finalised)");
  // GIL holder: locked && last_holder == tstate (last_holder is never cleared).
  uint64_t gil_holder = 0;
  auto gil_at = [&](uint64_t holder_addr, uint64_t locked_addr) {
    auto h = rd<uint64_t>(m, holder_addr);
    auto lk = rd<int32_t>(m, locked_addr);
    if (h && lk && *lk) gil_holder = *h;
  };
  if (l.rt_gil_holder >= 0) gil_at(runtime + l.rt_gil_holder, runtime + l.rt_gil_locked);
  std::vector<PyThread> out;
  std::map<uint64_t, std::optional<CodeInfo>> codes;
  std::set<uint64_t> seen_interps, seen_ts;
  uint64_t interp = *head;
  for (int ii = 0; interp && ii < kMaxInterps && seen_interps.insert(interp).second; ++ii) {
    if (l.is_gil_ptr >= 0)
      if (auto gil = rd<uint64_t>(m, interp + l.is_gil_ptr); gil && *gil)
        gil_at(*gil + l.gil_holder, *gil + l.gil_locked);
    auto ts = rd<uint64_t>(m, interp + l.is_threads_head);
    if (!ts) return make_error("cannot read the interpreter's thread list", fmt::format("0x{:x}", interp));
    uint64_t tstate = *ts;
    for (int ti = 0; tstate && ti < kMaxThreads && seen_ts.insert(tstate).second; ++ti) {
      PyThread t;
      t.tstate = tstate;
      t.interp_index = ii;
      auto owner = rd<uint64_t>(m, tstate + l.ts_interp);
      auto tid = rd<uint64_t>(m, tstate + l.ts_thread_id);
      auto next = rd<uint64_t>(m, tstate + l.ts_next);
      if (!owner || !tid || !next) {
        t.error = fmt::format("thread state 0x{:x} unreadable", tstate);
        out.push_back(std::move(t));
        break;
      }
      if (*owner != interp) {
        t.error = fmt::format("thread state 0x{:x} does not point back to its interpreter", tstate);
        out.push_back(std::move(t));
        break;
      }
      t.thread_id = *tid;
      if (l.ts_native_thread_id >= 0) {
        if (auto nt = rd<int64_t>(m, tstate + l.ts_native_thread_id)) t.native_tid = *nt;
      } else if (t.thread_id) {
        // 3.10: glibc's struct pthread holds the kernel tid at +0x2d0 (2.36);
        // the caller validates it against the task list.
        if (auto nt = rd<int32_t>(m, t.thread_id + 0x2d0)) t.native_tid = *nt;
      }
      t.holds_gil = gil_holder != 0 && gil_holder == tstate;
      walk_frames(m, l, tstate, t, codes);
      out.push_back(std::move(t));
      tstate = *next;
    }
    auto nx = rd<uint64_t>(m, interp + l.is_next);
    interp = nx ? *nx : 0;
  }
  return out;
}

}  // namespace ccdiag::python
