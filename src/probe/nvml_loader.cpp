#include <dlfcn.h>

#include <mutex>

#include "gpupeer/log.hpp"
#include "probe/nvml_api.hpp"

namespace gpupeer::nvml {
namespace {

template <class F>
void bind(void* lib, F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) GPUPEER_TRACE("NVML symbol {} not found", name);
}

}  // namespace

const Api* load(std::string& why) {
  static Api api;
  static std::string failure;
  static bool ok = false;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* err = dlerror();
      failure = std::string("cannot open libnvidia-ml.so.1 (NVIDIA driver not installed?): ") +
                (err ? err : "unknown dlopen error");
      return;
    }
    bind(lib, api.init, "nvmlInit_v2");
    bind(lib, api.shutdown, "nvmlShutdown");
    bind(lib, api.errorString, "nvmlErrorString");
    bind(lib, api.systemGetDriverVersion, "nvmlSystemGetDriverVersion");
    bind(lib, api.systemGetNvmlVersion, "nvmlSystemGetNVMLVersion");
    bind(lib, api.deviceGetHandleByPciBusId, "nvmlDeviceGetHandleByPciBusId_v2");
    bind(lib, api.deviceGetUuid, "nvmlDeviceGetUUID");
    bind(lib, api.deviceGetMigMode, "nvmlDeviceGetMigMode");
    bind(lib, api.deviceGetCurrPcieLinkGeneration, "nvmlDeviceGetCurrPcieLinkGeneration");
    bind(lib, api.deviceGetMaxPcieLinkGeneration, "nvmlDeviceGetMaxPcieLinkGeneration");
    bind(lib, api.deviceGetCurrPcieLinkWidth, "nvmlDeviceGetCurrPcieLinkWidth");
    bind(lib, api.deviceGetMaxPcieLinkWidth, "nvmlDeviceGetMaxPcieLinkWidth");
    bind(lib, api.deviceGetNvLinkState, "nvmlDeviceGetNvLinkState");
    bind(lib, api.deviceGetNvLinkVersion, "nvmlDeviceGetNvLinkVersion");
    bind(lib, api.deviceGetNvLinkRemotePciInfo, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    bind(lib, api.deviceGetNvLinkRemoteDeviceType, "nvmlDeviceGetNvLinkRemoteDeviceType");
    bind(lib, api.deviceGetTopologyCommonAncestor, "nvmlDeviceGetTopologyCommonAncestor");
    bind(lib, api.deviceGetP2PStatus, "nvmlDeviceGetP2PStatus");
    bind(lib, api.deviceGetGpuFabricInfo, "nvmlDeviceGetGpuFabricInfo");
    bind(lib, api.deviceGetPersistenceMode, "nvmlDeviceGetPersistenceMode");
    if (!api.init || !api.deviceGetHandleByPciBusId) {
      failure = "libnvidia-ml.so.1 lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2 (too old)";
      return;
    }
    Return r = api.init();
    if (r != kSuccess) {
      // 18 is NVML_ERROR_LIB_RM_VERSION_MISMATCH: library and kernel module differ.
      failure = "nvmlInit failed: " + api.describe(r);
      if (r == 18) failure += " (driver/library version mismatch: reboot or reload the nvidia module)";
      return;
    }
    ok = true;
    // Never shut down: other threads may still use handles, and the process ends soon.
  });
  if (!ok) {
    why = failure;
    return nullptr;
  }
  return &api;
}

}  // namespace gpupeer::nvml
