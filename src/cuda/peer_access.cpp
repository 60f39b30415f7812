#include "gpupeer/peer_access.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "cuda/cuda_status.hpp"
#include "gpupeer/log.hpp"

namespace gpupeer {

PeerAccess& PeerAccess::process() {
  static PeerAccess instance;
  return instance;
}

bool PeerAccess::isEnabled(int accessor, int owner) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return enabled_.count({accessor, owner}) > 0;
}

Status PeerAccess::enable(int accessor, int owner) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (enabled_.count({accessor, owner})) return Status::ok();
  int can = 0;
  GPUPEER_CUDA_CHECK(accessor, cudaDeviceCanAccessPeer(&can, accessor, owner));
  if (!can) {
    Status s(ErrorCode::kUnsupported,
             fmt::format("cudaDeviceCanAccessPeer({}, {}) = 0: the driver does not allow device {} "
                         "to map device {}'s memory",
                         accessor, owner, accessor, owner));
    s.withCall("cudaDeviceCanAccessPeer")
        .withDevice(accessor, busIdOf(accessor))
        .withDevice(owner, busIdOf(owner))
        .withApiError("cudaErrorPeerAccessUnsupported", "peer access is not supported between these two devices")
        .withKbId(kbIdForApiError("cudaErrorPeerAccessUnsupported"))
        .withLocation(__FILE__, __LINE__);
    return s;
  }
  int previous = 0;
  GPUPEER_CUDA_CHECK(accessor, cudaGetDevice(&previous));
  GPUPEER_CUDA_CHECK(accessor, cudaSetDevice(accessor));
  cudaError_t err = cudaDeviceEnablePeerAccess(owner, 0);
  (void)cudaSetDevice(previous);
  if (err == cudaErrorPeerAccessAlreadyEnabled) {
    // Another library got there first. The error stays pending unless cleared.
    (void)cudaGetLastError();
    GPUPEER_TRACE("peer access {} -> {} was already enabled", accessor, owner);
    err = cudaSuccess;
  }
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    Status s = cudaFailure(err, "cudaDeviceEnablePeerAccess", accessor, __FILE__, __LINE__, owner);
    return s;
  }
  GPUPEER_INFO("peer access enabled: device {} can reach device {}", accessor, owner);
  enabled_.insert({accessor, owner});
  return Status::ok();
}

}  // namespace gpupeer
