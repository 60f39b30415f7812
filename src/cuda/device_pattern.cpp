#include "cuda/device_pattern.hpp"

#include "cuda/copy_kernels.cuh"
#include "cuda/cuda_status.hpp"
#include "cuda/device_memory.hpp"

namespace gpupeer {

Status fillPatternOnDevice(int device, void* p, std::size_t bytes, std::uint64_t seed) {
  GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
  GPUPEER_CUDA_CHECK(device, launchFillPattern(p, bytes, seed, nullptr));
  GPUPEER_CUDA_CHECK(device, cudaDeviceSynchronize());
  return Status::ok();
}

Result<PatternMismatches> countPatternMismatches(int device, const void* p, std::size_t bytes, std::uint64_t seed) {
  DeviceBuffer counters;
  GPUPEER_RETURN_IF_ERROR(counters.allocate(device, 2 * sizeof(unsigned long long)));
  auto* c = reinterpret_cast<unsigned long long*>(counters.get());
  // The kernel adds to the count and takes the minimum offset: start from 0 and ~0.
  GPUPEER_CUDA_CHECK(device, cudaMemset(c, 0, sizeof(unsigned long long)));
  GPUPEER_CUDA_CHECK(device, cudaMemset(c + 1, 0xff, sizeof(unsigned long long)));
  GPUPEER_CUDA_CHECK(device, launchVerifyPattern(p, bytes, seed, c, c + 1, nullptr));
  unsigned long long host[2] = {0, 0};
  GPUPEER_CUDA_CHECK(device, cudaMemcpy(host, c, sizeof host, cudaMemcpyDeviceToHost));
  return PatternMismatches{host[0], host[1]};
}

}  // namespace gpupeer
