#include "sys/dl.hpp"

#include <dlfcn.h>

#include <climits>

namespace ccdiag {

DynLib& DynLib::operator=(DynLib&& other) noexcept {
  if (this != &other) {
    if (handle_) ::dlclose(handle_);
    handle_ = other.handle_;
    name_ = std::move(other.name_);
    other.handle_ = nullptr;
  }
  return *this;
}

DynLib::~DynLib() {
  if (handle_) ::dlclose(handle_);
}

Result<DynLib> DynLib::open(const std::string& name) {
  // RTLD_NOW: a library with unresolved symbols fails here, not later in a
  // call made from a probe child; RTLD_LOCAL keeps its symbols out of ours.
  void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    return make_error(name + " not found", "dlopen", e ? e : "");
  }
  DynLib lib;
  lib.handle_ = h;
  lib.name_ = name;
  return lib;
}

void* DynLib::symbol(const char* symbol) const {
  if (!handle_) return nullptr;
  ::dlerror();
  return ::dlsym(handle_, symbol);
}

std::string DynLib::origin() const {
  if (!handle_) return {};
  char path[PATH_MAX] = {};
  if (::dlinfo(handle_, RTLD_DI_ORIGIN, path) != 0) return {};
  return path;
}

}  // namespace ccdiag
