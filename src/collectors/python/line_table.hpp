// CPython line-number tables, decoded from the raw bytes of a code object's
// `co_linetable` (docs/python-stacks.md). Pure and total: any byte string is
// accepted; a table that ends before the queried offset yields -1 ("no line",
// faulthandler prints "???"), never a crash or an out-of-bounds read.
//
//   3.10: (address delta in bytes, signed line delta) byte pairs; line delta
//         -128 = range without a line (Objects/lnotab_notes.txt@v3.10.0).
//   3.11+: location table: entries start with a byte with bit 7 set, code in
//         bits 3-6, length-1 in code units in bits 0-2; codes 13/14 carry a
//         signed varint line delta, 10-12 a delta of code-10, 15 "no location"
//         (Objects/locations.md@v3.11.0).
#pragma once

#include <cstdint>
#include <string_view>

namespace ccdiag::python {

// Line for byte offset `addrq` into the bytecode (3.10: f_lasti * 2), or -1
// (no line, also for a computed line < 0 from a corrupt table).
// addrq < 0 -> firstlineno (frame not started), like PyCode_Addr2Line.
int line_for_offset_310(std::string_view table, int firstlineno, int64_t addrq);
int line_for_offset_311(std::string_view table, int firstlineno, int64_t addrq);

}  // namespace ccdiag::python
