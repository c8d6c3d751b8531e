// One dlopen/dlsym shim for every optional run-time library (NVML, libcuda;
// docs/probe-gpu.md). "Unavailable" is a result, never a crash: a library that is
// absent gives an Error naming the soname and dlerror(); a symbol that is
// absent gives nullptr, and the caller degrades (older drivers lack newer
// entry points).
//
// Ownership: a DynLib owns its handle and dlclose()s it when destroyed.
// Thread safety: dlerror() is per thread; open() and symbol() read it at once.
#pragma once

#include <string>

#include "ccdiag/result.hpp"

namespace ccdiag {

class DynLib {
 public:
  DynLib() = default;
  DynLib(DynLib&& other) noexcept : handle_(other.handle_), name_(std::move(other.name_)) { other.handle_ = nullptr; }
  DynLib& operator=(DynLib&& other) noexcept;
  DynLib(const DynLib&) = delete;
  DynLib& operator=(const DynLib&) = delete;
  ~DynLib();

  // dlopen(name, RTLD_NOW | RTLD_LOCAL). `name` is a soname searched on the
  // library path (LD_LIBRARY_PATH, ld.so.cache) or a path. The error message
  // is "<name> not found" plus dlerror()'s text in the hint.
  static Result<DynLib> open(const std::string& name);

  // The address of `symbol`, or nullptr when this library does not export it.
  void* symbol(const char* symbol) const;

  // Typed form: `auto f = lib.function<int (*)(unsigned)>("nvmlInitWithFlags");`
  template <class Fn>
  Fn function(const char* name) const {
    return reinterpret_cast<Fn>(symbol(name));
  }

  // The directory the library was loaded from ("" when unknown).
  std::string origin() const;
  const std::string& name() const { return name_; }
  bool loaded() const { return handle_ != nullptr; }

 private:
  void* handle_ = nullptr;
  std::string name_;
};

}  // namespace ccdiag
