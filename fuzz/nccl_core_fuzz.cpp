// Fuzzes the core-file reader and everything `nccl attach --core` does with a
// core: segments and notes, the magic scan (every table size), decoding of
// whatever the bytes claim is a comm, proxy list walks with hostile pointers.
// No file is opened: mapped-file paths resolve under a root that does not exist.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "collectors/nccl/attach/attach.hpp"
#include "collectors/nccl/attach/core_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ccdiag::nccl::attach;
  auto core = CoreFile::from_bytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  if (!core) return 0;
  AttachTarget t = core_target(std::make_shared<CoreFile>(std::move(*core)), "fuzz");
  t.file_prefix = "/nonexistent-ccdiag-fuzz-root";
  AttachOptions o;
  o.limits.max_bytes = 4 << 20;
  (void)attach_target(t, o);
  return 0;
}
