/* A fake libnvidia-ml.so.1 with NVML's C ABI (as declared in nvml.h), so
 * ccdiag's NVML probe runs through its real dlopen/dlsym path on machines with
 * no GPU. Tests select it with LD_LIBRARY_PATH=<build>/fake-nvml.
 *
 * The node it plays: an HGX H100 8-GPU baseboard with four NVSwitches (18
 * NVLink4 links per GPU, split 5/4/4/5 over the switches), driver 550.90.07,
 * Fabric Manager running. CCDIAG_FAKE_NVML_SCENARIO, a comma-separated list,
 * changes it:
 *   healthy             the node above (default)
 *   nvlink_down         GPU 1 links 4 and 5 inactive
 *   replay_rising       GPU 4 link 7: DL replay +37 and recovery +1 on every read
 *   init_hang           nvmlInit* never returns (a wedged driver)
 *   device_hang         every NVLink counter read on GPU 6 never returns
 *   gpu_lost            GPU 3 answers NVML_ERROR_GPU_IS_LOST (only cached PCI info left)
 *   ecc_errors          GPU 2: volatile uncorrectable ECC, a pending row remap
 *   fabric_not_started  every GPU's fabric state NOT_STARTED (Fabric Manager not running)
 *   throttled           GPU 5: HW + SW thermal slowdown at 91 C
 *   busy                one training process per GPU (pid 4100 + index, 70 GiB)
 *   pcie_only           no NVLink, no fabric: GPUs talk over PCIe only
 *   no_gpus             driver loaded, zero devices
 * The library never prints; unknown tokens are ignored. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef struct fake_gpu* nvmlDevice_t;

typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

typedef struct {
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state;
} nvmlGpuFabricInfo_t;

typedef struct {
  unsigned int version;
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state;
  unsigned int healthMask;
  unsigned char healthSummary;
} nvmlGpuFabricInfoV_t;

typedef union {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;

typedef struct {
  unsigned int fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;

enum { OK = 0, UNINIT = 1, INVALID = 2, NOT_SUPPORTED = 3, INSUFFICIENT_SIZE = 7, GPU_IS_LOST = 15 };
#define NGPU 8
#define NLINK 18

struct fake_gpu {
  unsigned index;
};
static struct fake_gpu g_gpus[NGPU] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
/* HGX H100 baseboard bus numbers. */
static const unsigned g_bus[NGPU] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
static const unsigned g_switch_bus[4] = {0x05, 0x06, 0x07, 0x08};
static int g_initialised;
static unsigned g_reads[NGPU][NLINK];

static int has(const char* token) {
  const char* s = getenv("CCDIAG_FAKE_NVML_SCENARIO");
  if (!s) return 0;
  size_t n = strlen(token);
  for (const char* p = s; (p = strstr(p, token)) != NULL; p += n)
    if ((p == s || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return 1;
  return 0;
}

static void hang_forever(void) {
  for (;;) pause();
}

static int lost(nvmlDevice_t d) { return has("gpu_lost") && d && d->index == 3; }
static int valid(nvmlDevice_t d) { return g_initialised && d && d >= g_gpus && d < g_gpus + NGPU; }

#define CHECK_DEV(d)                       \
  do {                                     \
    if (!g_initialised) return UNINIT;     \
    if (!valid(d)) return INVALID;         \
    if (lost(d)) return GPU_IS_LOST;       \
  } while (0)

const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 7: return "Insufficient Size";
    case 9: return "Driver Not Loaded";
    case 15: return "GPU is lost";
    default: return "Unknown Error";
  }
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
  (void)flags;
  if (has("init_hang")) hang_forever();
  g_initialised++;
  return OK;
}
nvmlReturn_t nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
nvmlReturn_t nvmlShutdown(void) {
  if (!g_initialised) return UNINIT;
  g_initialised--;
  return OK;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* v, unsigned int len) {
  if (!g_initialised) return UNINIT;
  if (len < 10) return INSUFFICIENT_SIZE;
  snprintf(v, len, "550.90.07");
  return OK;
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* v) {
  if (!g_initialised) return UNINIT;
  *v = 12040;
  return OK;
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* n) {
  if (!g_initialised) return UNINIT;
  *n = has("no_gpus") ? 0 : NGPU;
  return OK;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t* d) {
  if (!g_initialised) return UNINIT;
  if (i >= NGPU || has("no_gpus")) return INVALID;
  *d = &g_gpus[i];
  return OK;
}

static void fill_pci(nvmlPciInfo_t* p, unsigned bus, unsigned devid) {
  memset(p, 0, sizeof *p);
  p->domain = 0;
  p->bus = bus;
  p->device = 0;
  p->pciDeviceId = devid;
  p->pciSubSystemId = 0x16c110de;
  snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%04X:%02X:%02X.0", 0, bus, 0);
  snprintf(p->busId, sizeof p->busId, "%08X:%02X:%02X.0", 0, bus, 0);
}

/* PCI info is cached by the driver at init: it still answers for a lost GPU. */
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* p) {
  if (!g_initialised) return UNINIT;
  if (!valid(d)) return INVALID;
  fill_pci(p, g_bus[d->index], 0x233010de);
  return OK;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* u, unsigned int len) {
  CHECK_DEV(d);
  snprintf(u, len, "GPU-5f0a1c2e-7d3b-4a8e-9c61-0b2d4e6f8a%02x", d->index);
  return OK;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* n, unsigned int len) {
  CHECK_DEV(d);
  snprintf(n, len, "NVIDIA H100 80GB HBM3");
  return OK;
}
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int* i) {
  CHECK_DEV(d);
  *i = d->index;
  return OK;
}
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int* m) {
  CHECK_DEV(d);
  *m = d->index;
  return OK;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int* t) {
  CHECK_DEV(d);
  if (sensor != 0) return INVALID;
  *t = (has("throttled") && d->index == 5) ? 91 : 34 + d->index % 3;
  return OK;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long* r) {
  CHECK_DEV(d);
  if (has("throttled") && d->index == 5) *r = 0x20 | 0x40;
  else *r = has("busy") ? 0x0 : 0x1;
  return OK;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long* r) {
  return nvmlDeviceGetCurrentClocksEventReasons(d, r);
}
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int* cur, int* pending) {
  CHECK_DEV(d);
  *cur = 1;
  *pending = 1;
  return OK;
}
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter, unsigned long long* v) {
  CHECK_DEV(d);
  *v = 0;
  if (has("ecc_errors") && d->index == 2) {
    if (type == 1) *v = 2;            /* uncorrectable, volatile and aggregate */
    else *v = counter == 0 ? 150 : 1543;
  }
  return OK;
}
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int* corr, unsigned int* unc, unsigned int* pending,
                                       unsigned int* failure) {
  CHECK_DEV(d);
  *corr = 0;
  *unc = (has("ecc_errors") && d->index == 2) ? 1 : 0;
  *pending = *unc ? 1 : 0;
  *failure = 0;
  return OK;
}
/* H100 replaced page retirement with row remapping. */
nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, int cause, unsigned int* count, unsigned long long* addr) {
  (void)cause; (void)count; (void)addr;
  CHECK_DEV(d);
  return NOT_SUPPORTED;
}
nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int* pending) {
  (void)pending;
  CHECK_DEV(d);
  return NOT_SUPPORTED;
}

static nvmlReturn_t processes(nvmlDevice_t d, unsigned int* count, nvmlProcessInfo_t* infos) {
  CHECK_DEV(d);
  unsigned n = has("busy") ? 1 : 0;
  if (*count < n) {
    *count = n;
    return INSUFFICIENT_SIZE;
  }
  *count = n;
  if (n) {
    infos[0].pid = 4100 + d->index;
    infos[0].usedGpuMemory = 70ull << 30;
    infos[0].gpuInstanceId = 0xffffffffu;
    infos[0].computeInstanceId = 0xffffffffu;
  }
  return OK;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int* c, nvmlProcessInfo_t* i) {
  return processes(d, c, i);
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int* c, nvmlProcessInfo_t* i) {
  return processes(d, c, i);
}

static void fabric(nvmlDevice_t d, unsigned char* state, nvmlReturn_t* status, unsigned int* health,
                   unsigned char* summary) {
  *state = 3; /* COMPLETED */
  *status = OK;
  *health = 0;
  *summary = 1; /* healthy */
  if (has("pcie_only")) {
    *state = 0;
    *summary = 0;
  }
  if (has("fabric_not_started")) {
    *state = 1;
    *summary = 0;
  }
  (void)d;
}
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t d, nvmlGpuFabricInfoV_t* f) {
  CHECK_DEV(d);
  if (f->version != ((3u << 24) | sizeof(nvmlGpuFabricInfoV_t))) return 25; /* ARGUMENT_VERSION_MISMATCH */
  memset(f->clusterUuid, 0, sizeof f->clusterUuid);
  fabric(d, &f->state, &f->status, &f->healthMask, &f->healthSummary);
  f->cliqueId = 0;
  return OK;
}
nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t d, nvmlGpuFabricInfo_t* f) {
  CHECK_DEV(d);
  unsigned int health;
  unsigned char summary;
  memset(f, 0, sizeof *f);
  fabric(d, &f->state, &f->status, &health, &summary);
  return OK;
}
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t* v) {
  CHECK_DEV(d);
  for (int i = 0; i < n; ++i) {
    v[i].nvmlReturn = NOT_SUPPORTED;
    if (v[i].fieldId == 230) { /* GPU recovery action: none */
      v[i].nvmlReturn = OK;
      v[i].valueType = 1;
      v[i].value.uiVal = 0;
    }
  }
  return OK;
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int* g) {
  CHECK_DEV(d);
  *g = 5;
  return OK;
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int* w) {
  CHECK_DEV(d);
  *w = 16;
  return OK;
}

/* NVLink */
static int link_ok(nvmlDevice_t d, unsigned link) {
  return !(has("nvlink_down") && d->index == 1 && (link == 4 || link == 5));
}
static unsigned switch_of(unsigned link) { return link < 5 ? 0 : link < 9 ? 1 : link < 13 ? 2 : 3; }

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int* active) {
  CHECK_DEV(d);
  if (link >= NLINK) return INVALID;
  if (has("pcie_only")) return NOT_SUPPORTED;
  *active = link_ok(d, link);
  return OK;
}
nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t d, unsigned int link, unsigned int* v) {
  CHECK_DEV(d);
  if (link >= NLINK || has("pcie_only")) return link >= NLINK ? INVALID : NOT_SUPPORTED;
  *v = 4;
  return OK;
}
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link, nvmlPciInfo_t* p) {
  CHECK_DEV(d);
  if (link >= NLINK || has("pcie_only")) return link >= NLINK ? INVALID : NOT_SUPPORTED;
  if (!link_ok(d, link)) return NOT_SUPPORTED;
  fill_pci(p, g_switch_bus[switch_of(link)], 0x22a310de);
  return OK;
}
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned int link, int* type) {
  CHECK_DEV(d);
  if (link >= NLINK || has("pcie_only")) return link >= NLINK ? INVALID : NOT_SUPPORTED;
  *type = 2; /* NVSwitch */
  return OK;
}
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned int link, int counter, unsigned long long* v) {
  CHECK_DEV(d);
  if (link >= NLINK || has("pcie_only")) return link >= NLINK ? INVALID : NOT_SUPPORTED;
  if (has("device_hang") && d->index == 6) hang_forever();
  *v = 0;
  if (has("replay_rising") && d->index == 4 && link == 7) {
    unsigned n = g_reads[d->index][link];
    if (counter == 0) *v = 12 + 37ull * n;  /* DL replay */
    if (counter == 1) *v = 1 + 1ull * n;    /* DL recovery */
    if (counter == 3) g_reads[d->index][link]++; /* one sample = the four counters, crc_data read last */
  }
  return OK;
}

/* P2P and topology */
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, int cap, int* status) {
  CHECK_DEV(a);
  CHECK_DEV(b);
  if (a == b) return INVALID;
  if (has("pcie_only")) {
    /* PCIe peers: P2P over the switch within a NUMA half, none across the CPUs. */
    int same_half = (a->index < 4) == (b->index < 4);
    *status = cap == 2 ? 5 : (same_half ? 0 : 3);
    return OK;
  }
  *status = 0;
  return OK;
}
nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b, int* level) {
  CHECK_DEV(a);
  CHECK_DEV(b);
  if (a == b) {
    *level = 0;
    return OK;
  }
  if ((a->index / 2) == (b->index / 2)) *level = 20;      /* PXB: same PCIe switch */
  else if ((a->index < 4) == (b->index < 4)) *level = 40; /* NODE */
  else *level = 50;                                      /* SYS */
  return OK;
}
