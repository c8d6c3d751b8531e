// Walks a CPython runtime through a MemoryReader: interpreters -> thread
// states -> frames, decoding function / file / line per frame and which
// thread holds the GIL (docs/python-stacks.md). Runs unchanged on a live
// process (LiveMemoryReader) or byte buffers (tests).
//
// Every loop is bounded (64 interpreters, 4096 threads, 4096 frames, cycle
// detection); a bad pointer ends that thread's walk with `error` set, never
// the whole walk. Only reads; never writes to the target.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ccdiag/result.hpp"
#include "collectors/python/layout.hpp"
#include "sys/memory_reader.hpp"

namespace ccdiag::python {

struct PyFrame {
  std::string function;        // co_qualname (3.11+) else co_name
  std::string name;            // co_name (what faulthandler prints)
  std::string file;            // co_filename, UTF-8
  std::optional<int> line;     // nullopt when the instruction has no line
  bool is_entry = false;       // oldest frame of one _PyEval_EvalFrameDefault activation
};

// The c10d collective a thread waits in (torch/distributed/distributed_c10d.py
// frame with a `group` local), resolved through the module's own tables:
// _pg_names (group -> name), _pg_group_ranks (group -> {global rank: group
// rank}); the description (pg_desc: "default_pg", "mesh_tp") from the C++
// ProcessGroup, at the offset where the default group keeps "default_pg".
struct C10dWait {
  std::string op;            // the c10d function: all_reduce, barrier, ...
  std::string pg_name;       // "0" = the default group; "" when unresolved
  std::string pg_desc;       // "" when unknown
  std::vector<int> ranks;    // global ranks of the group (sorted); empty when unknown
};

struct PyThread {
  uint64_t tstate = 0;
  uint64_t thread_id = 0;      // pthread_t, as faulthandler / threading.get_ident()
  int64_t native_tid = -1;     // gettid() in the target's pid namespace; -1 unknown
  int64_t interp_index = 0;    // 0 = newest interpreter in the list
  bool holds_gil = false;
  std::optional<C10dWait> c10d;  // innermost c10d collective frame, when there is one
  std::string name;            // threading.Thread name ("" unknown: not a Thread, or version without the layout)
  std::vector<PyFrame> frames; // newest first
  std::string error;           // why the walk of this thread stopped early
};

// `runtime` = address of _PyRuntime in the target.
Result<std::vector<PyThread>> walk_runtime(const MemoryReader& m, uint64_t runtime, const Layout& l);

// The str value of instance attribute `attr` of `obj` (a plain Python class
// instance: managed dict with shared keys, or a materialised dict); nullopt
// when unreadable or the layout does not know this version.
std::optional<std::string> read_instance_str_attr(const MemoryReader& m, uint64_t obj, std::string_view attr,
                                                  const Layout& l);

// UTF-8 text of a str object (compact ASCII / Latin-1 / UCS-2 / UCS-4 and
// legacy strings); nullopt when unreadable or not a plausible str.
std::optional<std::string> read_str(const MemoryReader& m, uint64_t obj, const Layout& l);

}  // namespace ccdiag::python
