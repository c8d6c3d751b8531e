// Fuzzes the /proc parsers of rank discovery and stacks (stat, status, maps,
// syscall, environ + allowlist/redaction, mapped-library detection).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collectors/proc/proc_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ccdiag::parse_proc_stat(text);
  (void)ccdiag::parse_status(text);
  (void)ccdiag::parse_syscall_line(text);
  (void)ccdiag::parse_kernel_stack(text);
  size_t skipped = 0;
  const auto maps = ccdiag::parse_maps(text, &skipped);
  (void)ccdiag::mapped_libraries(maps);
  const auto env = ccdiag::parse_environ(text);
  (void)ccdiag::filter_environment(env).dump();
  (void)ccdiag::gpu_index_from_device_path(text);
  return 0;
}
