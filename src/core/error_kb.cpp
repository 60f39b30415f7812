#include "gpupeer/error_kb.hpp"

#include <utility>

namespace gpupeer {

std::string kbIdForApiError(std::string_view errorName) {
  // Each id must exist under kb/; tests/unit/error_kb_test.cpp checks that.
  static const std::pair<std::string_view, std::string_view> kTable[] = {
      {"cudaErrorPeerAccessUnsupported", "cuda/peer-access-unsupported-by-hardware"},
      {"cudaErrorPeerAccessAlreadyEnabled", "cuda/peer-access-already-enabled"},
      {"cudaErrorPeerAccessNotEnabled", "cuda/peer-access-not-enabled"},
      {"cudaErrorTooManyPeers", "cuda/too-many-peers"},
      {"cudaErrorSystemNotReady", "nvlink/fabric-manager-not-running"},
      {"cudaErrorInsufficientDriver", "driver/cuda-driver-too-old"},
      {"cudaErrorDevicesUnavailable", "cuda/exclusive-process-mode"},
      {"NVML_ERROR_LIB_RM_VERSION_MISMATCH", "driver/nvml-driver-mismatch"},
  };
  for (const auto& [name, id] : kTable)
    if (name == errorName) return std::string(id);
  return {};
}

}  // namespace gpupeer
