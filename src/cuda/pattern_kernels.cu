// Filling and verifying the seeded pattern on the device, so checking 512 MiB costs
// microseconds of GPU time instead of a copy to the host.
#include "cuda/copy_kernels.cuh"
#include "gpupeer/pattern.hpp"

namespace gpupeer {
namespace {

constexpr int kThreads = 256;

__device__ std::uint8_t byteOf(std::uint64_t word) { return static_cast<std::uint8_t>(word); }

__global__ void fillPatternBytesKernel(std::uint8_t* dst, std::size_t bytes, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes; i += stride)
    dst[i] = patternByte(seed, i);
}

// For 8-byte aligned destinations: one hash per 8 bytes, stored as one word.
__global__ void fillPatternKernel(std::uint8_t* dst, std::size_t bytes, std::uint64_t seed) {
  std::size_t words = bytes / 8;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t w = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < words; w += stride) {
    std::uint64_t h = splitmix64(seed ^ w * 0x2545f4914f6cdd1dULL);
    std::uint64_t out = 0;
    for (int b = 0; b < 8; ++b) {
      std::uint8_t v = byteOf(h >> (8 * b));
      out |= static_cast<std::uint64_t>(v ? v : 0x5a) << (8 * b);
    }
    reinterpret_cast<std::uint64_t*>(dst)[w] = out;
  }
  if (blockIdx.x == 0 && threadIdx.x < bytes % 8) {
    std::size_t i = words * 8 + threadIdx.x;
    dst[i] = patternByte(seed, i);
  }
}

__global__ void verifyPatternKernel(const std::uint8_t* data, std::size_t bytes, std::uint64_t seed,
                                    unsigned long long* mismatches, unsigned long long* firstOffset) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long bad = 0, first = ~0ULL;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes; i += stride) {
    if (data[i] != patternByte(seed, i)) {
      ++bad;
      if (i < first) first = i;
    }
  }
  if (bad) {
    atomicAdd(mismatches, bad);
    atomicMin(firstOffset, first);
  }
}

int blocksFor(std::size_t items) {
  std::size_t blocks = (items + kThreads - 1) / kThreads;
  return blocks > 4096 ? 4096 : blocks < 1 ? 1 : static_cast<int>(blocks);
}

}  // namespace

cudaError_t launchFillPattern(void* dst, std::size_t bytes, unsigned long long seed, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  if (reinterpret_cast<std::uintptr_t>(dst) % 8)
    fillPatternBytesKernel<<<blocksFor(bytes), kThreads, 0, stream>>>(static_cast<std::uint8_t*>(dst), bytes, seed);
  else
    fillPatternKernel<<<blocksFor(bytes / 8 + 1), kThreads, 0, stream>>>(static_cast<std::uint8_t*>(dst), bytes, seed);
  return cudaGetLastError();
}

cudaError_t launchVerifyPattern(const void* data, std::size_t bytes, unsigned long long seed,
                                unsigned long long* mismatches, unsigned long long* firstOffset, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  verifyPatternKernel<<<blocksFor(bytes), kThreads, 0, stream>>>(static_cast<const std::uint8_t*>(data), bytes, seed,
                                                                 mismatches, firstOffset);
  return cudaGetLastError();
}

}  // namespace gpupeer
