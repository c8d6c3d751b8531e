#include "collectors/gpu/nvml_api.hpp"

namespace ccdiag::nvml {

std::string return_name(Return r) {
  switch (r) {
    case 0: return "SUCCESS";
    case 1: return "UNINITIALIZED";
    case 2: return "INVALID_ARGUMENT";
    case 3: return "NOT_SUPPORTED";
    case 4: return "NO_PERMISSION";
    case 5: return "ALREADY_INITIALIZED";
    case 6: return "NOT_FOUND";
    case 7: return "INSUFFICIENT_SIZE";
    case 8: return "INSUFFICIENT_POWER";
    case 9: return "DRIVER_NOT_LOADED";
    case 10: return "TIMEOUT";
    case 11: return "IRQ_ISSUE";
    case 12: return "LIBRARY_NOT_FOUND";
    case 13: return "FUNCTION_NOT_FOUND";
    case 14: return "CORRUPTED_INFOROM";
    case 15: return "GPU_IS_LOST";
    case 16: return "RESET_REQUIRED";
    case 17: return "OPERATING_SYSTEM";
    case 18: return "LIB_RM_VERSION_MISMATCH";
    case 19: return "IN_USE";
    case 20: return "MEMORY";
    case 21: return "NO_DATA";
    case 23: return "INSUFFICIENT_RESOURCES";
    case 25: return "ARGUMENT_VERSION_MISMATCH";
    case 26: return "DEPRECATED";
    case 27: return "NOT_READY";
    case 28: return "GPU_NOT_FOUND";
    case 29: return "INVALID_STATE";
    case 999: return "UNKNOWN";
    default: return "RETURN_" + std::to_string(r);
  }
}

std::string Api::error_string(Return r) const {
  std::string s = return_name(r);
  if (ErrorString) {
    const char* t = ErrorString(r);
    if (t && *t) s = std::string(t) + " (" + s + ")";
  }
  return s;
}

Result<Api> load_api(const std::string& library) {
  auto lib = DynLib::open(library);
  if (!lib) return lib.error();
  Api a;
  a.lib = std::move(*lib);
#define CCDIAG_NVML_SYM(field, name) a.field = a.lib.function<decltype(a.field)>(name)
  CCDIAG_NVML_SYM(InitWithFlags, "nvmlInitWithFlags");
  CCDIAG_NVML_SYM(Init_v2, "nvmlInit_v2");
  CCDIAG_NVML_SYM(Shutdown, "nvmlShutdown");
  CCDIAG_NVML_SYM(ErrorString, "nvmlErrorString");
  CCDIAG_NVML_SYM(SystemGetDriverVersion, "nvmlSystemGetDriverVersion");
  CCDIAG_NVML_SYM(SystemGetCudaDriverVersion, "nvmlSystemGetCudaDriverVersion");
  CCDIAG_NVML_SYM(DeviceGetCount_v2, "nvmlDeviceGetCount_v2");
  CCDIAG_NVML_SYM(DeviceGetHandleByIndex_v2, "nvmlDeviceGetHandleByIndex_v2");
  CCDIAG_NVML_SYM(DeviceGetPciInfo_v3, "nvmlDeviceGetPciInfo_v3");
  CCDIAG_NVML_SYM(DeviceGetUUID, "nvmlDeviceGetUUID");
  CCDIAG_NVML_SYM(DeviceGetName, "nvmlDeviceGetName");
  CCDIAG_NVML_SYM(DeviceGetMinorNumber, "nvmlDeviceGetMinorNumber");
  CCDIAG_NVML_SYM(DeviceGetNvLinkState, "nvmlDeviceGetNvLinkState");
  CCDIAG_NVML_SYM(DeviceGetNvLinkVersion, "nvmlDeviceGetNvLinkVersion");
  CCDIAG_NVML_SYM(DeviceGetNvLinkRemotePciInfo_v2, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  CCDIAG_NVML_SYM(DeviceGetNvLinkRemoteDeviceType, "nvmlDeviceGetNvLinkRemoteDeviceType");
  CCDIAG_NVML_SYM(DeviceGetNvLinkErrorCounter, "nvmlDeviceGetNvLinkErrorCounter");
  CCDIAG_NVML_SYM(DeviceGetFieldValues, "nvmlDeviceGetFieldValues");
  CCDIAG_NVML_SYM(DeviceGetP2PStatus, "nvmlDeviceGetP2PStatus");
  CCDIAG_NVML_SYM(DeviceGetTopologyCommonAncestor, "nvmlDeviceGetTopologyCommonAncestor");
  CCDIAG_NVML_SYM(DeviceGetTemperature, "nvmlDeviceGetTemperature");
  CCDIAG_NVML_SYM(DeviceGetCurrentClocksEventReasons, "nvmlDeviceGetCurrentClocksEventReasons");
  CCDIAG_NVML_SYM(DeviceGetCurrentClocksThrottleReasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  CCDIAG_NVML_SYM(DeviceGetRetiredPages, "nvmlDeviceGetRetiredPages");
  CCDIAG_NVML_SYM(DeviceGetRetiredPagesPendingStatus, "nvmlDeviceGetRetiredPagesPendingStatus");
  CCDIAG_NVML_SYM(DeviceGetRemappedRows, "nvmlDeviceGetRemappedRows");
  CCDIAG_NVML_SYM(DeviceGetTotalEccErrors, "nvmlDeviceGetTotalEccErrors");
  CCDIAG_NVML_SYM(DeviceGetEccMode, "nvmlDeviceGetEccMode");
  CCDIAG_NVML_SYM(DeviceGetComputeRunningProcesses_v3, "nvmlDeviceGetComputeRunningProcesses_v3");
  CCDIAG_NVML_SYM(DeviceGetComputeRunningProcesses_v2, "nvmlDeviceGetComputeRunningProcesses_v2");
  CCDIAG_NVML_SYM(DeviceGetGpuFabricInfoV, "nvmlDeviceGetGpuFabricInfoV");
  CCDIAG_NVML_SYM(DeviceGetGpuFabricInfo, "nvmlDeviceGetGpuFabricInfo");
  CCDIAG_NVML_SYM(DeviceGetCurrPcieLinkGeneration, "nvmlDeviceGetCurrPcieLinkGeneration");
  CCDIAG_NVML_SYM(DeviceGetCurrPcieLinkWidth, "nvmlDeviceGetCurrPcieLinkWidth");
#undef CCDIAG_NVML_SYM
  if (!a.InitWithFlags && !a.Init_v2)
    return make_error("exports neither nvmlInitWithFlags nor nvmlInit_v2", library, "not an NVML library?");
  return a;
}

}  // namespace ccdiag::nvml
