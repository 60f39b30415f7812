#pragma once
// GPU memory as the tests set and read it: buffers cleared before a copy lands in them, and
// free memory as the leak checks read it.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

namespace gpupeer::testing {

/// Sets `bytes` of `p` on `device` to `value` and waits for it. cudaMemset alone runs on the
/// legacy stream, which the non-blocking streams that copies and collectives use do not wait
/// for: a copy could land first and be overwritten (seen under compute-sanitizer memcheck).
inline cudaError_t clearOnDevice(int device, void* p, std::size_t bytes, int value = 0) {
  cudaError_t err = cudaSetDevice(device);
  if (err == cudaSuccess) err = cudaMemset(p, value, bytes);
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  return err;
}

/// Free bytes of `device` once its work is done and the driver has given back what it caches.
/// Where peers have mapped each other's memory, the driver keeps some of it after the owner
/// frees it (2 MiB per GPU on a 2-GPU H100) and returns it only when an allocation fails; so a
/// reading taken before a failing create() and one taken after would differ by that cache, not
/// by anything create() kept. An allocation that cannot fit before each reading settles it.
inline std::size_t settledFreeBytes(int device) {
  cudaSetDevice(device);
  cudaDeviceSynchronize();
  std::size_t freeBytes = 0, totalBytes = 0;
  cudaMemGetInfo(&freeBytes, &totalBytes);
  void* tooLarge = nullptr;
  if (cudaMalloc(&tooLarge, freeBytes + (std::size_t{64} << 20)) == cudaSuccess) cudaFree(tooLarge);
  (void)cudaGetLastError();  // the failed allocation is not a sticky error; clear it all the same
  cudaMemGetInfo(&freeBytes, &totalBytes);
  return freeBytes;
}

/// settledFreeBytes of each GPU in `devices`.
inline std::vector<std::size_t> settledFreeBytes(const std::vector<int>& devices) {
  std::vector<std::size_t> out;
  for (int d : devices) out.push_back(settledFreeBytes(d));
  return out;
}

}  // namespace gpupeer::testing
