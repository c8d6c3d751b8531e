/* A fake libcuda.so.1 (CUDA driver API, the entry points ccdiag's P2P probe
 * uses) for machines with no GPU. Devices match fake_nvml.c's HGX H100 board
 * (same PCI bus ids, in the same order). "Device memory" is a token; a copy
 * advances a virtual stream clock by bytes / bandwidth, which CUDA events
 * read, so measured bandwidth follows the scenario exactly.
 * CCDIAG_FAKE_CUDA_SCENARIO, comma-separated:
 *   (empty)          8 GPUs, every pair peer-capable, 380 GB/s (NVLink4 through NVSwitch)
 *   gpus=N           N GPUs (1..8)
 *   pcie=N           every pair at N GB/s (a PCIe-only board)
 *   slow_pair=A-B    copies between A and B at 12 GB/s (NVLink expected, PCIe speed seen)
 *   hang_pair=A-B    a copy between A and B never completes (IOMMU/ACS eats the peer writes)
 *   no_peer=A-B      cuDeviceCanAccessPeer says 0 for A<->B
 *   init_fails       cuInit returns CUDA_ERROR_NO_DEVICE (100) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct fake_ctx* CUcontext;
typedef unsigned long long CUdeviceptr;

#define NGPU 8
struct fake_ctx {
  int dev;
};
static struct fake_ctx g_ctx[NGPU] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
static const unsigned g_bus[NGPU] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
static int g_init;
static CUcontext g_current;
static unsigned long long g_next_ptr = 0x7f0000000000ull;

static const char* scenario(void) {
  const char* s = getenv("CCDIAG_FAKE_CUDA_SCENARIO");
  return s ? s : "";
}
static int has(const char* token) {
  const char* s = scenario();
  size_t n = strlen(token);
  for (const char* p = s; (p = strstr(p, token)) != NULL; p += n)
    if ((p == s || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return 1;
  return 0;
}
/* "key=A-B" present for the unordered pair {a, b}? */
static int pair_is(const char* key, int a, int b) {
  const char* s = scenario();
  size_t n = strlen(key);
  for (const char* p = s; (p = strstr(p, key)) != NULL; p += n) {
    int x, y;
    if ((p == s || p[-1] == ',') && p[n] == '=' && sscanf(p + n + 1, "%d-%d", &x, &y) == 2)
      if ((x == a && y == b) || (x == b && y == a)) return 1;
  }
  return 0;
}
static int value_of(const char* key, int fallback) {
  const char* s = scenario();
  size_t n = strlen(key);
  for (const char* p = s; (p = strstr(p, key)) != NULL; p += n) {
    int v;
    if ((p == s || p[-1] == ',') && p[n] == '=' && sscanf(p + n + 1, "%d", &v) == 1) return v;
  }
  return fallback;
}
static int ngpu(void) {
  int n = value_of("gpus", NGPU);
  return n < 1 ? 1 : n > NGPU ? NGPU : n;
}

CUresult cuInit(unsigned int flags) {
  (void)flags;
  if (has("init_fails")) return 100;
  g_init = 1;
  return 0;
}
CUresult cuDriverGetVersion(int* v) {
  *v = 12040;
  return 0;
}
CUresult cuGetErrorString(CUresult r, const char** s) {
  switch (r) {
    case 0: *s = "no error"; break;
    case 1: *s = "invalid argument"; break;
    case 3: *s = "initialization error"; break;
    case 100: *s = "no CUDA-capable device is detected"; break;
    case 101: *s = "invalid device ordinal"; break;
    case 217: *s = "peer access is not supported between these two devices"; break;
    case 704: *s = "peer access is already enabled"; break;
    default: *s = "unknown error"; break;
  }
  return 0;
}
CUresult cuDeviceGetCount(int* n) {
  if (!g_init) return 3;
  *n = ngpu();
  return 0;
}
CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (!g_init) return 3;
  if (ordinal < 0 || ordinal >= ngpu()) return 101;
  *d = ordinal;
  return 0;
}
CUresult cuDeviceGetPCIBusId(char* buf, int len, CUdevice d) {
  if (d < 0 || d >= ngpu()) return 101;
  snprintf(buf, (size_t)len, "0000:%02X:00.0", g_bus[d]);
  return 0;
}
CUresult cuDeviceGetName(char* buf, int len, CUdevice d) {
  if (d < 0 || d >= ngpu()) return 101;
  snprintf(buf, (size_t)len, "NVIDIA H100 80GB HBM3");
  return 0;
}
CUresult cuDeviceCanAccessPeer(int* can, CUdevice a, CUdevice b) {
  if (a < 0 || a >= ngpu() || b < 0 || b >= ngpu()) return 101;
  *can = (a != b) && !pair_is("no_peer", a, b);
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  if (!g_init) return 3;
  if (d < 0 || d >= ngpu()) return 101;
  *c = &g_ctx[d];
  return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  return (d < 0 || d >= ngpu()) ? 101 : 0;
}
CUresult cuCtxSetCurrent(CUcontext c) {
  g_current = c;
  return 0;
}
CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
  (void)flags;
  if (!g_current || !peer) return 1;
  int can = 0;
  cuDeviceCanAccessPeer(&can, g_current->dev, peer->dev);
  return can ? 0 : 217;
}
static int g_stream_hung;
CUresult cuCtxSynchronize(void) {
  if (g_stream_hung)
    for (;;) pause();
  return g_current ? 0 : 1;
}
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  if (!g_current) return 1;
  *p = g_next_ptr;
  g_next_ptr += (bytes + 0xfffff) & ~0xfffffull;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  (void)p;
  return 0;
}
CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) {
  (void)p; (void)v; (void)n;
  return 0;
}

/* The legacy stream's timeline, in virtual microseconds: copies advance it by
 * their modelled duration, events read it. Timing is then exact whatever the
 * load on the test machine. A copy on a hung pair never completes: whoever
 * waits for the stream (event or context synchronize) blocks forever. */
static double g_stream_us;
struct fake_event {
  double at_us;
  int used;
};
static struct fake_event g_events[64];

static void enqueue_copy(size_t bytes, double gbps) { g_stream_us += 2.0 + (double)bytes / (gbps * 1e3); }

CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t bytes, void* stream) {
  (void)dst; (void)src; (void)stream;
  if (!dctx || !sctx) return 1;
  int a = sctx->dev, b = dctx->dev;
  if (pair_is("hang_pair", a, b)) g_stream_hung = 1;
  enqueue_copy(bytes, pair_is("slow_pair", a, b) ? 12.0 : value_of("pcie", 380));
  return 0;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, void* stream) {
  (void)dst; (void)src; (void)stream;
  enqueue_copy(bytes, 1500.0); /* HBM3 device-local copy */
  return 0;
}
CUresult cuEventCreate(struct fake_event** e, unsigned int flags) {
  (void)flags;
  for (int i = 0; i < 64; ++i)
    if (!g_events[i].used) {
      g_events[i].used = 1;
      *e = &g_events[i];
      return 0;
    }
  return 2; /* out of memory */
}
CUresult cuEventRecord(struct fake_event* e, void* stream) {
  (void)stream;
  if (!e) return 1;
  e->at_us = g_stream_us;
  return 0;
}
CUresult cuEventSynchronize(struct fake_event* e) {
  if (!e) return 1;
  if (g_stream_hung)
    for (;;) pause();
  return 0;
}
CUresult cuEventElapsedTime(float* ms, struct fake_event* start, struct fake_event* end) {
  if (!start || !end) return 1;
  *ms = (float)((end->at_us - start->at_us) / 1e3);
  return 0;
}
CUresult cuEventDestroy_v2(struct fake_event* e) {
  if (!e) return 1;
  e->used = 0;
  return 0;
}
