#pragma once
// Driver API functions through the runtime's entry points, so the binaries need no link to
// libcuda: the function of `name` (CUDA 12.0 ABI) as `Fn`, or null when the driver lacks it.

#include <cuda_runtime_api.h>

namespace gpupeer {

template <class Fn>
Fn driverEntryPoint(const char* name) {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &f, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<Fn>(f);
}

}  // namespace gpupeer
