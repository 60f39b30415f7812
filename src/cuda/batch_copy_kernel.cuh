#pragma once
// Many small copies in one kernel launch. The descriptors travel in the kernel's parameters
// (up to 32 KiB on CUDA 12.1+), so the launch needs no device-side setup and a CUDA graph
// that captures it stays valid after the caller's arrays are gone.

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpupeer {

struct BatchCopy {
  void* dst;
  const void* src;
  std::size_t bytes;
};

/// Descriptors per launch: 1024 x 24 bytes stays under the 32,764-byte parameter limit.
inline constexpr int kBatchCopiesPerLaunch = 1024;

/// Launches one kernel on the current device for `count` (<= kBatchCopiesPerLaunch) copies;
/// every pointer must be reachable from this device (local or peer with access enabled).
cudaError_t launchBatchCopy(const BatchCopy* copies, int count, cudaStream_t stream);

}  // namespace gpupeer
