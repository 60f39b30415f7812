#include <cstdint>

#include "cuda/batch_copy_kernel.cuh"

namespace gpupeer {
namespace {

struct BatchParams {
  BatchCopy copies[kBatchCopiesPerLaunch];
  int count;
};

constexpr int kThreads = 256;

// Block b copies descriptors b, b + gridDim.x, ...: small copies get a whole block each, so
// a 4 KiB copy is one 16-byte vector per thread.
__global__ void batchCopyKernel(const __grid_constant__ BatchParams p) {
  for (int c = blockIdx.x; c < p.count; c += gridDim.x) {
    auto* dst = static_cast<unsigned char*>(p.copies[c].dst);
    const auto* src = static_cast<const unsigned char*>(p.copies[c].src);
    std::size_t bytes = p.copies[c].bytes;
    auto d = reinterpret_cast<std::uintptr_t>(dst), s = reinterpret_cast<std::uintptr_t>(src);
    std::size_t head = ((d ^ s) & 15) ? bytes : ((16 - (d & 15)) & 15);
    if (head > bytes) head = bytes;
    for (std::size_t i = threadIdx.x; i < head; i += blockDim.x) dst[i] = src[i];
    std::size_t vectors = (bytes - head) / 16;
    auto* dv = reinterpret_cast<uint4*>(dst + head);
    const auto* sv = reinterpret_cast<const uint4*>(src + head);
    for (std::size_t i = threadIdx.x; i < vectors; i += blockDim.x) dv[i] = sv[i];
    for (std::size_t i = head + vectors * 16 + threadIdx.x; i < bytes; i += blockDim.x) dst[i] = src[i];
  }
}

}  // namespace

cudaError_t launchBatchCopy(const BatchCopy* copies, int count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  if (count > kBatchCopiesPerLaunch) return cudaErrorInvalidValue;
  // 24 KiB is too much for the stack; the launch copies the parameters, so one buffer per
  // thread is enough (kept for the thread's life).
  static thread_local BatchParams* local = new BatchParams;
  for (int i = 0; i < count; ++i) local->copies[i] = copies[i];
  local->count = count;
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  int blocks = count < sms * 4 ? count : sms * 4;
  batchCopyKernel<<<blocks, kThreads, 0, stream>>>(*local);
  return cudaGetLastError();
}

}  // namespace gpupeer
