// Fuzzes the CPython line-table decoders (3.10 pairs, 3.11+ location table)
// and the ELF reads used to find _PyRuntime (ElfImage maps a file and asks
// ElfView these same questions): any bytes, any offset, must return without
// reading out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "collectors/python/line_table.hpp"
#include "sys/elf_view.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  int32_t q;
  std::memcpy(&q, data + 1, 4);
  const std::string_view t(reinterpret_cast<const char*>(data + 5), size - 5);
  switch (data[0] % 3) {
    case 0: ccdiag::python::line_for_offset_310(t, 1, q); break;
    case 1: ccdiag::python::line_for_offset_311(t, 1, q); break;
    default:
      if (auto view = ccdiag::ElfView::parse(t)) {
        view->find_symbol("_PyRuntime", true);
        view->section(".PyRuntime");
        view->segments();
      }
  }
  return 0;
}
