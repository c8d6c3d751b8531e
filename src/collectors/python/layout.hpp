// Struct layouts of the CPython runtime that the walker needs, one `Layout`
// per (minor version), x86_64 default (GIL) builds (docs/python-stacks.md).
//   3.10, 3.11, 3.12: static tables (layouts.cpp); every value was verified
//     three ways: an offsetof probe compiled against the installed headers
//     with Py_BUILD_CORE, DWARF of the same libpython, and a live walk compared
//     with faulthandler (3.10.13, 3.11.2 Debian, 3.11.7, 3.12.1).
//   3.13, 3.14: filled from the target's own _Py_DebugOffsets (the first
//     member of _PyRuntime, cookie "xdebugpy"), through a per-minor table of
//     which byte of that struct holds which field.
// Offsets are bytes; -1 = the field does not exist in that version.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ccdiag/result.hpp"
#include "sys/memory_reader.hpp"

namespace ccdiag::python {

struct Layout {
  int minor = 0;
  bool verified = true;              // false: header-derived only (3.14)
  int64_t rt_interpreters_head = -1;
  int64_t is_next = -1, is_threads_head = -1;
  int64_t ts_next = -1, ts_interp = -1, ts_frame = -1;  // 3.10 frame, 3.11/12 cframe, 3.13+ current_frame
  int64_t cframe_current_frame = -1;                    // 3.11/3.12 only
  int64_t ts_thread_id = -1, ts_native_thread_id = -1;
  int64_t fr_code = -1, fr_previous = -1, fr_instr = -1;  // 3.10: f_lasti (int, code units)
  int64_t fr_lineno = -1;                                 // 3.10 f_lineno (tracing only)
  int64_t fr_is_entry = -1, fr_owner = -1;
  bool code_is_tagged = false;                            // 3.14 _PyStackRef: mask & ~3
  bool instr_is_current = false;                          // 3.13+: instr_ptr, not prev_instr
  int64_t co_filename = -1, co_name = -1, co_qualname = -1, co_linetable = -1, co_firstlineno = -1;
  int64_t co_code_adaptive = -1;
  int64_t ob_type = 8;
  int64_t str_length = 16, str_state = 32, str_ascii_data = -1, str_compact_data = -1;
  int64_t bytes_size = 16, bytes_sval = 32;
  // Thread names from `threading`: the frame's first local (self of
  // Thread._bootstrap_inner) and its instance attribute `_name`, read through
  // the type's shared keys (managed dicts). -1 where not known for a version.
  int64_t fr_localsplus = -1;
  int64_t tp_flags = 168;                 // PyTypeObject.tp_flags (stable since 3.0)
  int64_t ht_cached_keys = -1;            // PyHeapTypeObject.ht_cached_keys
  int64_t obj_values = -1, obj_dict = -1; // managed dict pre-header, relative to the object (3.11: -32, -24)
  int64_t dict_keys = 32, dict_values = 40;             // PyDictObject.ma_keys / ma_values
  int64_t dk_log2_index_bytes = 9, dk_kind = 10, dk_nentries = 24, dk_indices = 32;
  // c10d waits (which process group a collective waits in): a frame's
  // globals and its code's local names; tuple items; small ints.
  int64_t fr_globals = -1, co_localsplusnames = -1;
  int64_t tuple_size = 16, tuple_items = 24, long_size = 16, long_digits = 24;
  // GIL: 3.10/3.11 runtime-relative; 3.12+ through interp->ceval.gil.
  int64_t rt_gil_holder = -1, rt_gil_locked = -1;
  int64_t is_gil_ptr = -1, gil_holder = -1, gil_locked = -1;
};

// Static layout for 3.10 / 3.11 / 3.12; nullopt for any other minor.
std::optional<Layout> static_layout(int minor);

// Reads _Py_DebugOffsets at `runtime` (3.13+). Errors: no cookie, minor
// without an index table ("debug offsets layout unknown"), values that fail
// validation (section sizes > 1 MiB, fields outside their section).
Result<Layout> layout_from_debug_offsets(const MemoryReader& m, uint64_t runtime, uint64_t* version_hex);

}  // namespace ccdiag::python
