/* The DWARF fixture as NCCL 2.18-2.23.3 lays out ncclComm: no seqNumber[]
 * array, so NCCL_NUM_FUNCTIONS must come from latencies[] (see
 * dwarf_layout.cpp). The unit test reads this program's own DWARF. */
#define FIXTURE_BEFORE_2_23_4 1
#include "nccl_layout_dwarf_fixture.c"
