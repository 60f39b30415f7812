#pragma once
// The part of NVML's C API that gpupeer uses, declared here because NVML is opened at run
// time (dlopen "libnvidia-ml.so.1") so the tool runs where the driver is missing. Values and
// layouts follow nvml.h of driver 580; these structures have been stable since NVML 11.

#include <string>

namespace gpupeer::nvml {

using Return = int;
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorInvalidArgument = 2;
using Device = struct nvmlDevice_st*;

struct PciInfo {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

struct GpuFabricInfo {
  unsigned char clusterUuid[16];
  Return status;
  unsigned int cliqueId;
  unsigned char state;  // 0 not supported, 1 not started, 2 in progress, 3 completed
};

// nvmlGpuP2PCapsIndex_t and nvmlGpuP2PStatus_t
inline constexpr int kP2pCapsRead = 0;
inline constexpr int kP2pCapsWrite = 1;

/// Function table filled by load(); a missing symbol leaves its pointer null.
struct Api {
  Return (*init)() = nullptr;
  Return (*shutdown)() = nullptr;
  const char* (*errorString)(Return) = nullptr;
  Return (*systemGetDriverVersion)(char*, unsigned) = nullptr;
  Return (*systemGetNvmlVersion)(char*, unsigned) = nullptr;
  Return (*deviceGetHandleByPciBusId)(const char*, Device*) = nullptr;
  Return (*deviceGetUuid)(Device, char*, unsigned) = nullptr;
  Return (*deviceGetMigMode)(Device, unsigned*, unsigned*) = nullptr;
  Return (*deviceGetCurrPcieLinkGeneration)(Device, unsigned*) = nullptr;
  Return (*deviceGetMaxPcieLinkGeneration)(Device, unsigned*) = nullptr;
  Return (*deviceGetCurrPcieLinkWidth)(Device, unsigned*) = nullptr;
  Return (*deviceGetMaxPcieLinkWidth)(Device, unsigned*) = nullptr;
  Return (*deviceGetNvLinkState)(Device, unsigned, int*) = nullptr;
  Return (*deviceGetNvLinkVersion)(Device, unsigned, unsigned*) = nullptr;
  Return (*deviceGetNvLinkRemotePciInfo)(Device, unsigned, PciInfo*) = nullptr;
  Return (*deviceGetNvLinkRemoteDeviceType)(Device, unsigned, int*) = nullptr;
  Return (*deviceGetTopologyCommonAncestor)(Device, Device, int*) = nullptr;
  Return (*deviceGetP2PStatus)(Device, Device, int, int*) = nullptr;
  Return (*deviceGetGpuFabricInfo)(Device, GpuFabricInfo*) = nullptr;
  Return (*deviceGetPersistenceMode)(Device, int*) = nullptr;  // nvmlEnableState_t: 1 = enabled

  std::string describe(Return r) const {
    return errorString ? std::string(errorString(r)) + " (" + std::to_string(r) + ")"
                       : "NVML error " + std::to_string(r);
  }
};

/// Opens and initialises NVML once per process. On failure returns nullptr and sets `why`.
const Api* load(std::string& why);

}  // namespace gpupeer::nvml
