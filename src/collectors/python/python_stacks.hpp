// Python stacks of a live process, merged into its native stacks
// (docs/python-stacks.md).
//
// locate_runtime(): candidates are /proc/PID/exe and every libpython* mapping
// of /proc/PID/maps, opened through /proc/PID/exe or /proc/PID/root/<path>
// (works across mount namespaces and for deleted files). _PyRuntime comes from
// .dynsym/.symtab, else the .PyRuntime section; the version from the
// _Py_DebugOffsets cookie (3.13+), Py_Version (3.11+) or the file name (3.10).
// Host paths read: /proc/PID/{maps,exe,root/...}; memory via process_vm_readv.
//
// add_python_frames(): reads the Python state (after the native capture; the
// target is stuck, so the two agree — a thread that moved in between shows a
// Python stack newer than its native one) and interleaves it into
// ps.threads[].frames at the _PyEval_EvalFrameDefault frames. A process with
// no Python candidate is left untouched; a Python process that cannot be
// read gets ps.python_error = "<reason>" and keeps its native stacks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ccdiag/result.hpp"
#include "ccdiag/stack_model.hpp"
#include "ccdiag/sysroot.hpp"
#include "collectors/python/walker.hpp"

namespace ccdiag::python {

struct RuntimeLocation {
  uint64_t runtime = 0;       // address of _PyRuntime in the target
  std::string module;         // "python3.11", "libpython3.12.so.1.0"
  int minor = 0;
  uint64_t version_hex = 0;   // PY_VERSION_HEX when known, else 0
};

// Error with message "not a Python process" when there is no candidate at all.
Result<RuntimeLocation> locate_runtime(const SysRoot& root, int64_t pid, const MemoryReader& m);

// Interleaves `py` (newest first, entry flags set) into `native` (innermost
// first). Returns false (and leaves native then Python) when the number of
// eval-loop activations and Python entry frames disagree.
bool interleave(std::vector<StackFrame>& native, const std::vector<PyFrame>& py);

void add_python_frames(const SysRoot& root, ProcessStacks& ps);

}  // namespace ccdiag::python
