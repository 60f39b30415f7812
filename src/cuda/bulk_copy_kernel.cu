// Copies through shared memory with Hopper's bulk copy engine (TMA): one thread per block
// issues large global->shared loads and shared->global stores, so the NVLink sees big
// requests instead of one 16-byte access per thread. Hopper (sm_90) and newer only.
#include <cstdint>

#include "cuda/copy_kernels.cuh"

namespace gpupeer {
namespace {

// 4 stages of 32 KiB: 128 KiB of shared memory per block, one block per SM. The pipeline keeps
// up to three chunk loads in flight while the fourth is stored (chunk size: docs/collectives.md,
// tuned constants).
constexpr int kStages = 4;
constexpr std::uint32_t kChunk = 32 * 1024;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ std::uint32_t sharedAddress(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

__device__ void waitParity(std::uint32_t bar, std::uint32_t parity) {
  asm volatile(
      "{\n .reg .pred done;\n"
      "WAIT_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

__device__ void loadChunk(std::uint32_t smem, const std::uint8_t* src, std::uint32_t bar) {
  // The barrier expects kChunk bytes; the bulk load signals them as they land.
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(kChunk) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem),
               "l"(src), "r"(kChunk), "r"(bar)
               : "memory");
}
#endif

__global__ void bulkCopyKernel(std::uint8_t* dst, const std::uint8_t* src, std::size_t chunks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) std::uint8_t stage[];
  __shared__ __align__(8) std::uint64_t bars[kStages];
  if (threadIdx.x != 0) return;
  const std::uint32_t base = sharedAddress(stage);
  for (int s = 0; s < kStages; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sharedAddress(&bars[s])));
  // The bulk copy engine (async proxy) must see the initialised barriers.
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");

  // This block's chunks: blockIdx.x, blockIdx.x + gridDim.x, ...
  std::size_t mine = chunks > blockIdx.x ? (chunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  auto chunkAt = [&](std::size_t i) { return (blockIdx.x + i * gridDim.x) * static_cast<std::size_t>(kChunk); };
  for (std::size_t i = 0; i + 1 < kStages && i < mine; ++i)
    loadChunk(base + i * kChunk, src + chunkAt(i), sharedAddress(&bars[i]));
  std::uint32_t parity = 0;  // bit s: phase expected next on stage s
  for (std::size_t i = 0; i < mine; ++i) {
    int s = static_cast<int>(i % kStages);
    waitParity(sharedAddress(&bars[s]), (parity >> s) & 1);
    parity ^= 1u << s;
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst + chunkAt(i)),
                 "r"(base + s * kChunk), "r"(kChunk)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    // The store of chunk i-1 must have read its stage before chunk i+kStages-1 reuses it.
    asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
    std::size_t next = i + kStages - 1;
    if (next < mine)
      loadChunk(base + (next % kStages) * kChunk, src + chunkAt(next), sharedAddress(&bars[next % kStages]));
  }
  // Stores must finish before the block's shared memory goes away.
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

}  // namespace

bool bulkCopySupported(int device) {
  int major = 0;
  return cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major >= 9;
}

cudaError_t launchBulkCopy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream, int blocks,
                           std::size_t* copied) {
  *copied = 0;
  auto d = reinterpret_cast<std::uintptr_t>(dst);
  auto s = reinterpret_cast<std::uintptr_t>(src);
  std::size_t chunks = bytes / kChunk;
  if ((d | s) & 15 || chunks == 0) return cudaSuccess;  // bulk copies need 16-byte alignment
  const int smem = kStages * kChunk;
  // The attribute is per device; setting it each launch is cheap (no synchronisation).
  cudaError_t err = cudaFuncSetAttribute(bulkCopyKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess) return err;
  int grid = blocks > 0 ? blocks : 132;
  if (static_cast<std::size_t>(grid) > chunks) grid = static_cast<int>(chunks);
  bulkCopyKernel<<<grid, 32, smem, stream>>>(static_cast<std::uint8_t*>(dst), static_cast<const std::uint8_t*>(src),
                                             chunks);
  err = cudaGetLastError();
  if (err == cudaSuccess) *copied = chunks * kChunk;
  return err;
}

}  // namespace gpupeer
