// NVML's C ABI, restated from the public header (NVML API 13; layouts checked
// against the header history back to CUDA 11) so that no NVML header or
// library is needed at build time. Everything is resolved at run time through
// sys/dl.hpp; a symbol the installed driver lacks stays nullptr and the probe
// records it as not supported (docs/probe-gpu.md, Evidence kinds).
#pragma once

#include <cstdint>
#include <string>

#include "ccdiag/result.hpp"
#include "sys/dl.hpp"

namespace ccdiag::nvml {

using Return = int;        // nvmlReturn_t
using Device = void*;      // nvmlDevice_t, opaque

enum : Return {
  SUCCESS = 0,
  ERROR_UNINITIALIZED = 1,
  ERROR_INVALID_ARGUMENT = 2,
  ERROR_NOT_SUPPORTED = 3,
  ERROR_NO_PERMISSION = 4,
  ERROR_NOT_FOUND = 6,
  ERROR_INSUFFICIENT_SIZE = 7,
  ERROR_DRIVER_NOT_LOADED = 9,
  ERROR_TIMEOUT = 10,
  ERROR_FUNCTION_NOT_FOUND = 13,
  ERROR_GPU_IS_LOST = 15,
  ERROR_RESET_REQUIRED = 16,
  ERROR_LIB_RM_VERSION_MISMATCH = 18,
  ERROR_UNKNOWN = 999,
};

// "GPU_IS_LOST" for 15; "RETURN_<n>" for codes this table does not know.
std::string return_name(Return r);

constexpr unsigned kInitFlagNoGpus = 1;
constexpr unsigned kMaxLinks = 36;  // NVML_NVLINK_MAX_LINKS
constexpr unsigned kBusIdLen = 32;
constexpr unsigned kUuidLen = 96;
constexpr unsigned kNameLen = 96;
constexpr unsigned kDriverVersionLen = 80;

struct PciInfo {                     // nvmlPciInfo_t
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;          // (device << 16) | vendor
  unsigned int pciSubSystemId;
  char busId[kBusIdLen];             // "00000000:18:00.0"
};
static_assert(sizeof(PciInfo) == 68, "nvmlPciInfo_t is 68 bytes");

struct ProcessInfo {                 // nvmlProcessInfo_t (v2/v3)
  unsigned int pid;
  unsigned long long usedGpuMemory;  // ~0ULL when not available
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
static_assert(sizeof(ProcessInfo) == 24, "nvmlProcessInfo_t is 24 bytes");

struct GpuFabricInfo {               // nvmlGpuFabricInfo_t (v1, NVML 12.0)
  unsigned char clusterUuid[16];
  Return status;
  unsigned int cliqueId;
  unsigned char state;
};
static_assert(sizeof(GpuFabricInfo) == 28, "nvmlGpuFabricInfo_t is 28 bytes");

struct GpuFabricInfoV3 {             // nvmlGpuFabricInfo_v3_t (NVML 12.4+, GetGpuFabricInfoV)
  unsigned int version;
  unsigned char clusterUuid[16];
  Return status;
  unsigned int cliqueId;
  unsigned char state;
  unsigned int healthMask;
  unsigned char healthSummary;
};
static_assert(sizeof(GpuFabricInfoV3) == 40, "nvmlGpuFabricInfo_v3_t is 40 bytes");
constexpr unsigned kGpuFabricInfoV3Version = (3u << 24) | 40u;

union Value {                        // nvmlValue_t
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
};

struct FieldValue {                  // nvmlFieldValue_t
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;                     // 0 double, 1 uint, 2 ulong, 3 ull, 4 sll, 5 sint, 6 ushort
  Return nvmlReturn;
  Value value;
};
static_assert(sizeof(FieldValue) == 40, "nvmlFieldValue_t is 40 bytes");

// Field ids used (nvmlDeviceGetFieldValues).
constexpr unsigned kFieldGpuRecoveryAction = 230;

// Enum values used.
constexpr int kNvLinkErrReplay = 0, kNvLinkErrRecovery = 1, kNvLinkErrCrcFlit = 2, kNvLinkErrCrcData = 3;
constexpr int kMemErrCorrected = 0, kMemErrUncorrected = 1;
constexpr int kEccVolatile = 0, kEccAggregate = 1;
constexpr int kRetireMultipleSbe = 0, kRetireDbe = 1;
constexpr int kP2PRead = 0, kP2PWrite = 1, kP2PNvlink = 2, kP2PAtomics = 3;
constexpr int kTempGpu = 0;
constexpr unsigned char kFabricNotSupported = 0, kFabricNotStarted = 1, kFabricInProgress = 2, kFabricCompleted = 3;

// The entry points ccdiag uses. Any may be nullptr (older driver).
struct Api {
  DynLib lib;
  Return (*InitWithFlags)(unsigned int) = nullptr;
  Return (*Init_v2)() = nullptr;
  Return (*Shutdown)() = nullptr;
  const char* (*ErrorString)(Return) = nullptr;
  Return (*SystemGetDriverVersion)(char*, unsigned int) = nullptr;
  Return (*SystemGetCudaDriverVersion)(int*) = nullptr;
  Return (*DeviceGetCount_v2)(unsigned int*) = nullptr;
  Return (*DeviceGetHandleByIndex_v2)(unsigned int, Device*) = nullptr;
  Return (*DeviceGetPciInfo_v3)(Device, PciInfo*) = nullptr;
  Return (*DeviceGetUUID)(Device, char*, unsigned int) = nullptr;
  Return (*DeviceGetName)(Device, char*, unsigned int) = nullptr;
  Return (*DeviceGetMinorNumber)(Device, unsigned int*) = nullptr;
  Return (*DeviceGetNvLinkState)(Device, unsigned int, int*) = nullptr;
  Return (*DeviceGetNvLinkVersion)(Device, unsigned int, unsigned int*) = nullptr;
  Return (*DeviceGetNvLinkRemotePciInfo_v2)(Device, unsigned int, PciInfo*) = nullptr;
  Return (*DeviceGetNvLinkRemoteDeviceType)(Device, unsigned int, int*) = nullptr;
  Return (*DeviceGetNvLinkErrorCounter)(Device, unsigned int, int, unsigned long long*) = nullptr;
  Return (*DeviceGetFieldValues)(Device, int, FieldValue*) = nullptr;
  Return (*DeviceGetP2PStatus)(Device, Device, int, int*) = nullptr;
  Return (*DeviceGetTopologyCommonAncestor)(Device, Device, int*) = nullptr;
  Return (*DeviceGetTemperature)(Device, int, unsigned int*) = nullptr;
  Return (*DeviceGetCurrentClocksEventReasons)(Device, unsigned long long*) = nullptr;
  Return (*DeviceGetCurrentClocksThrottleReasons)(Device, unsigned long long*) = nullptr;
  Return (*DeviceGetRetiredPages)(Device, int, unsigned int*, unsigned long long*) = nullptr;
  Return (*DeviceGetRetiredPagesPendingStatus)(Device, int*) = nullptr;
  Return (*DeviceGetRemappedRows)(Device, unsigned int*, unsigned int*, unsigned int*, unsigned int*) = nullptr;
  Return (*DeviceGetTotalEccErrors)(Device, int, int, unsigned long long*) = nullptr;
  Return (*DeviceGetEccMode)(Device, int*, int*) = nullptr;
  Return (*DeviceGetComputeRunningProcesses_v3)(Device, unsigned int*, ProcessInfo*) = nullptr;
  Return (*DeviceGetComputeRunningProcesses_v2)(Device, unsigned int*, ProcessInfo*) = nullptr;
  Return (*DeviceGetGpuFabricInfoV)(Device, GpuFabricInfoV3*) = nullptr;
  Return (*DeviceGetGpuFabricInfo)(Device, GpuFabricInfo*) = nullptr;
  Return (*DeviceGetCurrPcieLinkGeneration)(Device, unsigned int*) = nullptr;
  Return (*DeviceGetCurrPcieLinkWidth)(Device, unsigned int*) = nullptr;

  // nvmlErrorString when exported, else return_name().
  std::string error_string(Return r) const;
};

// dlopen(`library`) and resolve every entry point. Fails only when the
// library cannot be loaded or exports neither init entry point.
Result<Api> load_api(const std::string& library);

}  // namespace ccdiag::nvml
