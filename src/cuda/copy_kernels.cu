#include <cstdint>

#include "cuda/copy_kernels.cuh"

namespace gpupeer {
namespace {

// 4 independent 16-byte loads per thread before the first store keep enough bytes in
// flight per SM to cover NVLink latency (~1 us at ~400 GB/s is ~400 KB across the GPU).
constexpr int kUnroll = 4;
constexpr int kThreads = 512;

__global__ void copyVectorsKernel(uint4* __restrict__ dst, const uint4* __restrict__ src, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < count; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) dst[i + u * stride] = v[u];
  }
  for (; i < count; i += stride) dst[i] = src[i];
}

__global__ void copyBytesKernel(unsigned char* __restrict__ dst, const unsigned char* __restrict__ src,
                                std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    dst[i] = src[i];
}

__global__ void spinUntilFlagKernel(volatile int* flag, unsigned long long timeoutNs) {
  unsigned long long start = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  while (*flag == 0) {
    unsigned long long now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > timeoutNs) break;  // never hold the GPU forever if the host died
  }
}

int defaultBlocks() {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  return sms > 0 ? sms * 2 : 264;  // 2 blocks of 512 threads per SM: full occupancy
}

}  // namespace

cudaError_t launchSmCopy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream, int blocks,
                         SmCopyKernel kernel) {
  if (bytes == 0) return cudaSuccess;
  if (blocks <= 0) blocks = defaultBlocks();
  auto d = reinterpret_cast<std::uintptr_t>(dst);
  auto s = reinterpret_cast<std::uintptr_t>(src);
  if (((d ^ s) & 15) != 0) {
    copyBytesKernel<<<blocks, kThreads, 0, stream>>>(static_cast<unsigned char*>(dst),
                                                     static_cast<const unsigned char*>(src), bytes);
    return cudaGetLastError();
  }
  // Same alignment modulo 16: bytes up to the first 16-byte boundary, vectors, then the tail.
  std::size_t head = (16 - (d & 15)) & 15;
  if (head > bytes) head = bytes;
  auto* dstBytes = static_cast<unsigned char*>(dst);
  const auto* srcBytes = static_cast<const unsigned char*>(src);
  if (kernel == SmCopyKernel::kBulk) {
    int device = 0;
    cudaGetDevice(&device);
    if (bulkCopySupported(device)) {
      if (head) copyBytesKernel<<<1, 32, 0, stream>>>(dstBytes, srcBytes, head);
      std::size_t done = 0;
      int sms = 0;
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
      cudaError_t err = launchBulkCopy(dstBytes + head, srcBytes + head, bytes - head, stream, sms, &done);
      if (err != cudaSuccess) return err;
      // The rest (under one chunk per block's share) goes the vector way.
      return launchSmCopy(dstBytes + head + done, srcBytes + head + done, bytes - head - done, stream, blocks,
                          SmCopyKernel::kVector);
    }
  }
  std::size_t vectors = (bytes - head) / 16;
  std::size_t tail = bytes - head - vectors * 16;
  if (head) copyBytesKernel<<<1, 32, 0, stream>>>(dstBytes, srcBytes, head);
  if (vectors) {
    std::size_t needed = (vectors + kThreads - 1) / kThreads;
    int grid = needed < static_cast<std::size_t>(blocks) ? static_cast<int>(needed) : blocks;
    copyVectorsKernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<uint4*>(dstBytes + head),
                                                     reinterpret_cast<const uint4*>(srcBytes + head), vectors);
  }
  if (tail) {
    std::size_t done = head + vectors * 16;
    copyBytesKernel<<<1, 32, 0, stream>>>(dstBytes + done, srcBytes + done, tail);
  }
  return cudaGetLastError();
}

cudaError_t launchSpinUntilFlag(volatile int* flag, unsigned long long timeoutNs, cudaStream_t stream) {
  spinUntilFlagKernel<<<1, 1, 0, stream>>>(flag, timeoutNs);
  return cudaGetLastError();
}

}  // namespace gpupeer
