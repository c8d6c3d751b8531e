#include "collectors/python/walker.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>

#include "ccdiag/utf8.hpp"
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

struct CodeInfo {
  std::string name, qualname, file, table;
  int firstlineno = 0;
  int group_local = -1;  // distributed_c10d.py functions: index of the `group` local
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
    append_utf8(out, c);
  }
  if (*len > kMaxStr) out += "...";
  return out;
}

namespace {

struct KeyHit {
  int64_t index = 0;
  uint64_t value = 0;  // combined tables: the entry's value
};

// `attr` in a dict keys object: DICT_KEYS_GENERAL entries are {hash, key,
// value}, UNICODE and SPLIT ones {key, value}; bounded scan of dk_nentries.
std::optional<KeyHit> keys_lookup(const MemoryReader& m, uint64_t keys, std::string_view attr, const Layout& l) {
  if (!keys) return std::nullopt;
  auto log2ix = rd<uint8_t>(m, keys + static_cast<uint64_t>(l.dk_log2_index_bytes));
  auto kind = rd<uint8_t>(m, keys + static_cast<uint64_t>(l.dk_kind));
  auto n = rd<int64_t>(m, keys + static_cast<uint64_t>(l.dk_nentries));
  if (!log2ix || !kind || !n || *log2ix > 24 || *kind > 2 || *n < 0 || *n > 4096) return std::nullopt;
  const uint64_t ents = keys + static_cast<uint64_t>(l.dk_indices) + (uint64_t{1} << *log2ix);
  const uint64_t esz = *kind == 0 ? 24 : 16, koff = *kind == 0 ? 8 : 0;
  for (int64_t i = 0; i < *n; ++i) {
    const uint64_t at = ents + static_cast<uint64_t>(i) * esz + koff;
    auto k = rd<uint64_t>(m, at);
    if (!k || !*k) continue;
    auto ks = read_str(m, *k, l);
    if (!ks || *ks != attr) continue;
    auto v = rd<uint64_t>(m, at + 8);
    return KeyHit{i, v ? *v : 0};
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> read_instance_str_attr(const MemoryReader& m, uint64_t obj, std::string_view attr,
                                                  const Layout& l) {
  constexpr uint64_t kManagedDict = uint64_t{1} << 4;  // Py_TPFLAGS_MANAGED_DICT (3.11+)
  if (!obj || l.ht_cached_keys < 0 || l.obj_values >= 0 || l.obj_dict >= 0) return std::nullopt;
  auto type = rd<uint64_t>(m, obj + static_cast<uint64_t>(l.ob_type));
  if (!type || !*type) return std::nullopt;
  auto flags = rd<uint64_t>(m, *type + static_cast<uint64_t>(l.tp_flags));
  if (!flags || !(*flags & kManagedDict)) return std::nullopt;
  auto values = rd<uint64_t>(m, obj + static_cast<uint64_t>(l.obj_values));
  auto dict = rd<uint64_t>(m, obj + static_cast<uint64_t>(l.obj_dict));
  uint64_t value = 0;
  if (dict && *dict) {  // materialised: a dict object (split or combined)
    auto keys = rd<uint64_t>(m, *dict + static_cast<uint64_t>(l.dict_keys));
    auto dvals = rd<uint64_t>(m, *dict + static_cast<uint64_t>(l.dict_values));
    if (!keys) return std::nullopt;
    auto hit = keys_lookup(m, *keys, attr, l);
    if (!hit) return std::nullopt;
    if (dvals && *dvals) {
      auto v = rd<uint64_t>(m, *dvals + static_cast<uint64_t>(hit->index) * 8);
      value = v ? *v : 0;
    } else {
      value = hit->value;
    }
  } else if (values && *values) {  // values only: keys shared by the type
    auto keys = rd<uint64_t>(m, *type + static_cast<uint64_t>(l.ht_cached_keys));
    if (!keys) return std::nullopt;
    auto hit = keys_lookup(m, *keys, attr, l);
    if (!hit) return std::nullopt;
    auto v = rd<uint64_t>(m, *values + static_cast<uint64_t>(hit->index) * 8);
    value = v ? *v : 0;
  }
  return read_str(m, value, l);
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
  if (l.co_localsplusnames >= 0 && ci.file.ends_with("torch/distributed/distributed_c10d.py"))
    if (auto names = rd<uint64_t>(m, code + static_cast<uint64_t>(l.co_localsplusnames)); names && *names) {
      auto n = rd<int64_t>(m, *names + static_cast<uint64_t>(l.tuple_size));
      for (int64_t i = 0; n && i < std::min<int64_t>(*n, 256); ++i) {
        auto item = rd<uint64_t>(m, *names + static_cast<uint64_t>(l.tuple_items + 8 * i));
        if (!item) break;
        if (read_str(m, *item, l) == std::optional<std::string>("group")) {
          ci.group_local = static_cast<int>(i);
          break;
        }
      }
    }
  if (*table) {
    auto sz = rd<int64_t>(m, *table + l.bytes_size);
    if (sz && *sz > 0 && *sz <= kMaxTable) {
      ci.table.resize(static_cast<size_t>(*sz));
      if (!m.read_exact(*table + l.bytes_sval, ci.table.data(), ci.table.size())) ci.table.clear();
    }
  }
  return ci;
}

// Every (key, value) of a dict object (combined or split), bounded; `fn`
// returns false to stop.
template <class F>
void dict_items(const MemoryReader& m, uint64_t dict, const Layout& l, F&& fn) {
  auto keys = rd<uint64_t>(m, dict + static_cast<uint64_t>(l.dict_keys));
  auto vals = rd<uint64_t>(m, dict + static_cast<uint64_t>(l.dict_values));
  if (!keys || !*keys) return;
  auto log2ix = rd<uint8_t>(m, *keys + static_cast<uint64_t>(l.dk_log2_index_bytes));
  auto kind = rd<uint8_t>(m, *keys + static_cast<uint64_t>(l.dk_kind));
  auto n = rd<int64_t>(m, *keys + static_cast<uint64_t>(l.dk_nentries));
  if (!log2ix || !kind || !n || *log2ix > 24 || *kind > 2 || *n < 0 || *n > 65536) return;
  const uint64_t ents = *keys + static_cast<uint64_t>(l.dk_indices) + (uint64_t{1} << *log2ix);
  const uint64_t esz = *kind == 0 ? 24 : 16, koff = *kind == 0 ? 8 : 0;
  for (int64_t i = 0; i < *n; ++i) {
    const uint64_t at = ents + static_cast<uint64_t>(i) * esz + koff;
    auto k = rd<uint64_t>(m, at);
    if (!k) return;
    if (!*k) continue;  // deleted slot
    std::optional<uint64_t> v = vals && *vals ? rd<uint64_t>(m, *vals + static_cast<uint64_t>(i) * 8) : rd<uint64_t>(m, at + 8);
    if (!v) return;
    if (!fn(*k, *v)) return;
  }
}

uint64_t dict_get(const MemoryReader& m, uint64_t dict, std::string_view key, const Layout& l) {
  uint64_t out = 0;
  dict_items(m, dict, l, [&](uint64_t k, uint64_t v) {
    if (read_str(m, k, l) == std::optional<std::string>(std::string(key))) {
      out = v;
      return false;
    }
    return true;
  });
  return out;
}

uint64_t dict_get_ptr(const MemoryReader& m, uint64_t dict, uint64_t key, const Layout& l) {
  uint64_t out = 0;
  dict_items(m, dict, l, [&](uint64_t k, uint64_t v) {
    if (k != key) return true;
    out = v;
    return false;
  });
  return out;
}

std::optional<int64_t> read_small_int(const MemoryReader& m, uint64_t obj, const Layout& l) {
  auto size = rd<int64_t>(m, obj + static_cast<uint64_t>(l.long_size));
  if (!size || *size < 0 || *size > 2) return std::nullopt;  // ranks: non-negative, < 2^60
  int64_t v = 0;
  for (int64_t i = *size - 1; i >= 0; --i) {
    auto d = rd<uint32_t>(m, obj + static_cast<uint64_t>(l.long_digits + 4 * i));
    if (!d) return std::nullopt;
    v = (v << 30) | (*d & 0x3fffffff);
  }
  return v;
}

// A libstdc++ std::string {char* p; size_t n; union {char buf[16]; size_t cap;}}.
std::optional<std::string> read_std_string(const MemoryReader& m, uint64_t at) {
  auto p = rd<uint64_t>(m, at);
  auto n = rd<uint64_t>(m, at + 8);
  if (!p || !n || *n > 512 || (*n && !*p)) return std::nullopt;
  std::string s(static_cast<size_t>(*n), '\0');
  if (*n && !m.read_exact(*p, s.data(), s.size())) return std::nullopt;
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return std::nullopt;
  return s;
}

// Offset of pg_desc_ inside the C++ ProcessGroup: where the default group's
// object holds the std::string "default_pg" (short-string: data at +16).
std::optional<uint64_t> default_desc_offset(const MemoryReader& m, uint64_t cpp) {
  for (size_t len : {size_t{2048}, size_t{1024}, size_t{512}}) {
    std::vector<uint8_t> buf(len);
    if (!m.read_exact(cpp, buf.data(), buf.size())) continue;
    for (size_t off = 0; off + 32 <= len; off += 8) {
      uint64_t p = 0, n = 0;
      std::memcpy(&p, buf.data() + off, 8);
      std::memcpy(&n, buf.data() + off + 8, 8);
      if (n == 10 && p == cpp + off + 16 && std::memcmp(buf.data() + off + 16, "default_pg", 10) == 0) return off;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// The process group object `group` of a distributed_c10d frame whose module
// globals are `globals`; nullopt when it is not a known group (None, ...).
std::optional<C10dWait> resolve_c10d(const MemoryReader& m, const Layout& l, uint64_t group, uint64_t globals,
                                     const std::string& op) {
  const uint64_t names = dict_get(m, globals, "_pg_names", l);
  if (!names) return std::nullopt;
  C10dWait w;
  w.op = op;
  uint64_t default_pg = 0;
  dict_items(m, names, l, [&](uint64_t k, uint64_t v) {
    auto s = read_str(m, v, l);
    if (!s) return true;
    if (k == group) w.pg_name = *s;
    if (*s == "0") default_pg = k;
    return true;
  });
  if (w.pg_name.empty()) return std::nullopt;
  if (const uint64_t gr = dict_get(m, globals, "_pg_group_ranks", l))
    if (const uint64_t ranks = dict_get_ptr(m, gr, group, l)) {
      dict_items(m, ranks, l, [&](uint64_t k, uint64_t) {
        if (auto r = read_small_int(m, k, l)) w.ranks.push_back(static_cast<int>(*r));
        return w.ranks.size() < 65536;
      });
      std::sort(w.ranks.begin(), w.ranks.end());
    }
  // pybind11 instance: the C++ object pointer follows the object header.
  auto cpp_default = default_pg ? rd<uint64_t>(m, default_pg + 16) : std::nullopt;
  auto cpp = rd<uint64_t>(m, group + 16);
  if (cpp_default && *cpp_default && cpp && *cpp)
    if (auto off = default_desc_offset(m, *cpp_default))
      if (auto d = read_std_string(m, *cpp + *off)) w.pg_desc = *d;
  return w;
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
    // The innermost c10d collective frame: which group it waits in.
    if (!t.c10d && ci.group_local >= 0 && l.fr_localsplus >= 0 && l.fr_globals >= 0) {
      auto grp = rd<uint64_t>(m, f + static_cast<uint64_t>(l.fr_localsplus + 8 * ci.group_local));
      auto glob = rd<uint64_t>(m, f + static_cast<uint64_t>(l.fr_globals));
      if (grp && *grp && glob && *glob) t.c10d = resolve_c10d(m, l, *grp, *glob, ci.name);
    }
    // threading.Thread._bootstrap(_inner)(self): the Thread's name.
    if (t.name.empty() && l.fr_localsplus >= 0 && (ci.name == "_bootstrap_inner" || ci.name == "_bootstrap") &&
        ci.file.ends_with("threading.py"))
      if (auto self = rd<uint64_t>(m, f + static_cast<uint64_t>(l.fr_localsplus)); self && *self)
        if (auto nm = read_instance_str_attr(m, *self, "_name", l)) t.name = *nm;
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
