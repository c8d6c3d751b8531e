// Fuzzes the kernel-log line decoders (kmsg records, dmesg, journal JSON, Xid).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collectors/kernel/kernel_log.hpp"
#include "collectors/kernel/xid.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ccdiag::parse_xid_line(text);
  (void)ccdiag::parse_fell_off_bus_line(text);
  (void)ccdiag::parse_kernel_log(text, "fuzz", "host");
  return 0;
}
