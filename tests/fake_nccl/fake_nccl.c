/* A stand-in libnccl.so.2 for `nccl attach` tests: what ccdiag reads from a
 * real libnccl's file, and nothing else — the version string in .rodata
 * (tests patch the placeholder to "NCCL version 2.28.9+cuda13.0" etc., the
 * same bytes NCCL's banner uses), a build-id, and the RAS communicator list
 * ncclComms/nNcclComms as non-exported .bss symbols, as in a release build.
 * Communicator images themselves are laid out by tests/programs/nccl_fake_rank.cpp. */
#include <stdlib.h>

/* Patched in place by the tests; the X's never parse as a version. */
__attribute__((used)) const char ccdiag_fake_nccl_banner[48] = "NCCL version XX.XX.XX+cudaXX.X";

/* Hidden like NCCL's own (-fvisibility=hidden): in .symtab, not in .dynsym. */
__attribute__((visibility("hidden"))) void** ncclComms;
__attribute__((visibility("hidden"))) int nNcclComms;

/* The test target registers its comms the way ncclRasCommInit does. */
__attribute__((visibility("default"))) void ccdiag_fake_nccl_ras_add(void* comm) {
  void** grown = (void**)realloc(ncclComms, sizeof(void*) * (size_t)(nNcclComms + 1));
  if (!grown) return;
  grown[nNcclComms] = comm;
  ncclComms = grown;
  nNcclComms++;
}

__attribute__((visibility("default"))) int ncclGetVersion(int* v) {
  *v = 0;
  return 0;
}
