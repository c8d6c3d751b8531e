#include "collectors/python/layout.hpp"

#include <cstring>
#include <fmt/format.h>

namespace ccdiag::python {

std::optional<Layout> static_layout(int minor) {
  // Values: offsetof probe + DWARF + live walk (see layout.hpp), x86_64.
  Layout l;
  l.minor = minor;
  if (minor == 10) {  // 3.10.13
    l.rt_interpreters_head = 32;
    l.is_next = 0, l.is_threads_head = 8;
    l.ts_next = 8, l.ts_interp = 16, l.ts_frame = 24, l.ts_thread_id = 176;
    l.fr_previous = 24, l.fr_code = 32, l.fr_instr = 96, l.fr_lineno = 100;
    l.co_firstlineno = 40, l.co_filename = 104, l.co_name = 112, l.co_linetable = 120;
    l.str_ascii_data = 48, l.str_compact_data = 72;
    l.rt_gil_holder = 360, l.rt_gil_locked = 368;
    return l;
  }
  if (minor == 11) {  // 3.11.2 (Debian) and 3.11.7 agree
    l.rt_interpreters_head = 40;
    l.is_next = 0, l.is_threads_head = 16;
    l.ts_next = 8, l.ts_interp = 16, l.ts_frame = 56, l.cframe_current_frame = 8;
    l.ts_thread_id = 152, l.ts_native_thread_id = 160;
    l.fr_code = 32, l.fr_previous = 48, l.fr_instr = 56, l.fr_is_entry = 68, l.fr_owner = 69;
    l.co_firstlineno = 72, l.co_filename = 112, l.co_name = 120, l.co_qualname = 128, l.co_linetable = 136;
    l.co_code_adaptive = 184;
    l.str_ascii_data = 48, l.str_compact_data = 72;
    l.rt_gil_holder = 368, l.rt_gil_locked = 376;
    // Thread names (3.11.2, read back from a live Thread with ctypes):
    // localsplus follows the 72-byte frame header; PyHeapTypeObject is 904
    // bytes with ht_cached_keys 32 before its end; values/dict pre-header.
    l.fr_localsplus = 72, l.ht_cached_keys = 872, l.obj_values = -32, l.obj_dict = -24;
    l.fr_globals = 8, l.co_localsplusnames = 96;
    return l;
  }
  if (minor == 12) {  // 3.12.1
    l.rt_interpreters_head = 40;
    l.is_next = 0, l.is_threads_head = 72;
    l.ts_next = 8, l.ts_interp = 16, l.ts_frame = 56, l.cframe_current_frame = 0;
    l.ts_thread_id = 136, l.ts_native_thread_id = 144;
    l.fr_code = 0, l.fr_previous = 8, l.fr_instr = 56, l.fr_owner = 70;
    l.co_firstlineno = 68, l.co_filename = 112, l.co_name = 120, l.co_qualname = 128, l.co_linetable = 136;
    l.co_code_adaptive = 192;
    l.str_ascii_data = 40, l.str_compact_data = 56;
    l.is_gil_ptr = 384, l.gil_holder = 8, l.gil_locked = 16;
    return l;
  }
  return std::nullopt;
}

namespace {

// Byte positions inside _Py_DebugOffsets of the fields we use, per minor.
// 3.13: compiled against 3.13.0 headers and read back from the live process.
// 3.14: header-derived (Include/internal/pycore_debug_offsets.h@v3.14.0).
struct DebugIndex {
  int rt_size, rt_interpreters_head;
  int is_size, is_next, is_threads_head, is_ceval_gil, is_gil_state, is_gil_locked, is_gil_holder;
  int ts_size, ts_next, ts_interp, ts_current_frame, ts_thread_id, ts_native_thread_id;
  int fr_size, fr_previous, fr_executable, fr_instr_ptr, fr_owner;
  int co_size, co_filename, co_name, co_qualname, co_linetable, co_firstlineno, co_code_adaptive;
  int ob_type;
  int bytes_size, bytes_ob_size, bytes_sval;
  int str_size, str_state, str_length, str_ascii_size;
};

constexpr DebugIndex k313{24, 40,  48, 64, 72, 112, 120, 136, 144,  152, 168, 176, 184, 192, 200,
                          224, 232, 240, 248, 264,  272, 280, 288, 296, 304, 312, 344,  360,
                          512, 520, 528,  536, 544, 552, 560};
constexpr DebugIndex k314{24, 40,  48, 64, 72, 120, 128, 144, 152,  176, 192, 200, 208, 216, 224,
                          248, 256, 264, 272, 288,  312, 320, 328, 336, 344, 352, 384,  408,
                          592, 600, 608,  616, 624, 632, 640};

}  // namespace

Result<Layout> layout_from_debug_offsets(const MemoryReader& m, uint64_t runtime, uint64_t* version_hex) {
  uint8_t buf[800];
  if (!m.read_exact(runtime, buf, 24)) return make_error("cannot read _PyRuntime", fmt::format("0x{:x}", runtime));
  if (std::memcmp(buf, "xdebugpy", 8) != 0) return make_error("no _Py_DebugOffsets cookie at _PyRuntime");
  uint64_t version = 0, free_threaded = 0;
  std::memcpy(&version, buf + 8, 8);
  std::memcpy(&free_threaded, buf + 16, 8);
  if (version_hex) *version_hex = version;
  const int minor = static_cast<int>((version >> 16) & 0xff);
  if ((version >> 24) != 3) return make_error(fmt::format("implausible debug offsets version 0x{:x}", version));
  if (free_threaded) return make_error(fmt::format("free-threaded CPython 3.{} is not supported", minor));
  const DebugIndex* ix = minor == 13 ? &k313 : minor == 14 ? &k314 : nullptr;
  if (!ix) return make_error(fmt::format("CPython 3.{} not supported (debug offsets layout unknown)", minor));
  const size_t total = minor == 13 ? 584 : 760;
  if (!m.read_exact(runtime, buf, total)) return make_error("cannot read _Py_DebugOffsets");
  auto w = [&](int off) {
    int64_t v;
    std::memcpy(&v, buf + off, 8);
    return v;
  };
  // pystack-style validation: sizes sane, every field inside its struct.
  auto check = [&](int size_off, std::initializer_list<int> fields) {
    const int64_t size = w(size_off);
    if (size <= 0 || size > (1 << 20)) return false;
    for (int f : fields)
      if (w(f) < 0 || w(f) >= size) return false;
    return true;
  };
  if (!check(ix->rt_size, {ix->rt_interpreters_head}) ||
      !check(ix->is_size, {ix->is_next, ix->is_threads_head, ix->is_ceval_gil, ix->is_gil_locked, ix->is_gil_holder}) ||
      !check(ix->ts_size, {ix->ts_next, ix->ts_interp, ix->ts_current_frame, ix->ts_thread_id, ix->ts_native_thread_id}) ||
      !check(ix->fr_size, {ix->fr_previous, ix->fr_executable, ix->fr_instr_ptr, ix->fr_owner}) ||
      !check(ix->co_size, {ix->co_filename, ix->co_name, ix->co_qualname, ix->co_linetable, ix->co_firstlineno,
                           ix->co_code_adaptive}) ||
      !check(ix->bytes_size, {ix->bytes_ob_size, ix->bytes_sval}) ||
      !check(ix->str_size, {ix->str_state, ix->str_length, ix->str_ascii_size}))
    return make_error(fmt::format("CPython 3.{} debug offsets fail validation", minor));
  Layout l;
  l.minor = minor;
  l.verified = minor == 13;
  l.rt_interpreters_head = w(ix->rt_interpreters_head);
  l.is_next = w(ix->is_next), l.is_threads_head = w(ix->is_threads_head);
  l.ts_next = w(ix->ts_next), l.ts_interp = w(ix->ts_interp), l.ts_frame = w(ix->ts_current_frame);
  l.ts_thread_id = w(ix->ts_thread_id), l.ts_native_thread_id = w(ix->ts_native_thread_id);
  l.fr_previous = w(ix->fr_previous), l.fr_code = w(ix->fr_executable), l.fr_instr = w(ix->fr_instr_ptr);
  l.fr_owner = w(ix->fr_owner);
  l.code_is_tagged = minor >= 14;
  l.instr_is_current = true;
  l.co_filename = w(ix->co_filename), l.co_name = w(ix->co_name), l.co_qualname = w(ix->co_qualname);
  l.co_linetable = w(ix->co_linetable), l.co_firstlineno = w(ix->co_firstlineno);
  l.co_code_adaptive = w(ix->co_code_adaptive);
  l.ob_type = w(ix->ob_type);
  l.bytes_size = w(ix->bytes_ob_size), l.bytes_sval = w(ix->bytes_sval);
  l.str_state = w(ix->str_state), l.str_length = w(ix->str_length);
  l.str_ascii_data = w(ix->str_ascii_size);
  // Non-ASCII compact data follows PyCompactUnicodeObject = sizeof(PyUnicodeObject) - 8.
  l.str_compact_data = w(ix->str_size) - 8;
  // locked/holder are PyInterpreterState-relative (its embedded _gil); make
  // them relative to the GIL in use, reached through interp->ceval.gil.
  l.is_gil_ptr = w(ix->is_ceval_gil);
  l.gil_holder = w(ix->is_gil_holder) - w(ix->is_gil_state);
  l.gil_locked = w(ix->is_gil_locked) - w(ix->is_gil_state);
  return l;
}

}  // namespace ccdiag::python
