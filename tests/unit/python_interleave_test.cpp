// Python frames replace the eval-loop activations of the native stack, one
// run of Python frames (ending at an entry frame) per _PyEval_EvalFrameDefault,
// the way py-spy --native shows them.
#include <catch2/catch.hpp>

#include "collectors/python/python_stacks.hpp"

using namespace ccdiag;

namespace {

std::vector<StackFrame> natives(std::initializer_list<const char*> names) {
  std::vector<StackFrame> out;
  for (const char* n : names) {
    StackFrame f;
    f.function = n;
    out.push_back(f);
  }
  return out;
}

python::PyFrame py(const char* fn, bool entry) {
  python::PyFrame f;
  f.function = fn;
  f.name = fn;
  f.file = "train.py";
  f.line = 1;
  f.is_entry = entry;
  return f;
}

std::vector<std::string> names(const std::vector<StackFrame>& fs) {
  std::vector<std::string> out;
  for (const auto& f : fs) out.push_back((f.kind == "python" ? "py:" : "") + f.function);
  return out;
}

}  // namespace

TEST_CASE("python frames are interleaved at eval-loop frames (3.11 entry runs)", "[python]") {
  // Thread in lock.acquire, called from Python code that was entered twice
  // from C (module code, then a C callback into Python).
  auto n = natives({"__futex_abstimed_wait_common", "lock_PyThread_acquire_lock", "_PyEval_EvalFrameDefault",
                    "_PyObject_Call", "_PyEval_EvalFrameDefault", "PyEval_EvalCode", "Py_RunMain", "main"});
  std::vector<python::PyFrame> p{py("Trainer.evaluate", false), py("callback", true), py("main", false),
                                 py("<module>", true)};
  REQUIRE(python::interleave(n, p));
  CHECK(names(n) == std::vector<std::string>{"__futex_abstimed_wait_common", "lock_PyThread_acquire_lock",
                                             "py:Trainer.evaluate", "py:callback", "_PyObject_Call", "py:main",
                                             "py:<module>", "PyEval_EvalCode", "Py_RunMain", "main"});
}

TEST_CASE("python frames: .cold parts count as eval frames; mismatch appends with false", "[python]") {
  auto n = natives({"select", "_PyEval_EvalFrameDefault.cold", "Py_RunMain"});
  std::vector<python::PyFrame> p{py("poll", true)};
  REQUIRE(python::interleave(n, p));
  CHECK(names(n) == std::vector<std::string>{"select", "py:poll", "Py_RunMain"});

  auto broken = natives({"select", "??"});  // native unwind stopped early
  REQUIRE_FALSE(python::interleave(broken, p));
  CHECK(names(broken) == std::vector<std::string>{"select", "??", "py:poll"});
}
