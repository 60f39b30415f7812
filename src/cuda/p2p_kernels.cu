#include "cuda/one_shot_device.cuh"
#include "cuda/p2p_kernels.cuh"

namespace gpupeer {
namespace {

constexpr int kP2pThreads = 512;

__device__ std::uint32_t* wordsOf(const P2pArgs& a, int owner) {
  return reinterpret_cast<std::uint32_t*>(static_cast<char*>(a.memory[owner]) + a.layout.wordsOffset());
}

// Waits until *word reaches `want` (acquire); false after the bound or an abort.
__device__ bool awaitCount(const P2pArgs& a, const std::uint32_t* word, std::uint32_t want, int peer) {
  const unsigned long long start = oneshot::now();
  for (int spins = 0;; ++spins) {
    std::uint32_t seen;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(seen) : "l"(word) : "memory");
    if (static_cast<int>(seen - want) >= 0) return true;
    if ((spins & 63) == 63 && oneshot::waitGivesUp(a.error, a.timeoutNs, a.abortWord, start, peer)) return false;
  }
}

// The block's threads copy `bytes`: 16 bytes at a time where both ends allow it.
__device__ void copyBlock(char* dst, const char* src, std::size_t bytes) {
  if ((reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src) | bytes) % 16 == 0) {
    for (std::size_t i = threadIdx.x; i < bytes / 16; i += blockDim.x)
      reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
  } else {
    for (std::size_t i = threadIdx.x; i < bytes; i += blockDim.x) dst[i] = src[i];
  }
}

__global__ void __launch_bounds__(kP2pThreads) p2pKernel(P2pArgs a) {
  const P2pTask t = a.tasks[blockIdx.x];
  const int me = a.rank, n = a.layout.ranks;
  std::uint32_t* mine = wordsOf(a, me);
  std::uint32_t* const ready = mine;    // [sender]
  std::uint32_t* const ack = mine + n;  // [receiver]
  std::uint32_t* const sendSeq = mine + 2 * n;
  std::uint32_t* const recvSeq = mine + 3 * n;
  const std::size_t slot = a.layout.slotBytes;
  const std::size_t chunks = (t.bytes + slot - 1) / slot;
  __shared__ bool failed;
  if (threadIdx.x == 0) failed = false;
  const std::uint32_t base = t.send ? sendSeq[t.peer] : recvSeq[t.peer];
  __syncthreads();
  for (std::size_t k = 0; k < chunks && !failed; ++k) {
    const std::uint32_t c = base + static_cast<std::uint32_t>(k);
    const std::size_t at = k * slot, len = t.bytes - at < slot ? t.bytes - at : slot;
    if (t.send) {
      // Slot c % 2 is free once the receiver has taken chunk c - 2.
      if (threadIdx.x == 0 && !awaitCount(a, ack + t.peer, c - 1, t.peer)) failed = true;
      __syncthreads();
      if (failed) break;
      char* to = static_cast<char*>(a.memory[t.peer]) + a.layout.slotOffset(me, c % 2);
      copyBlock(to, static_cast<const char*>(t.buffer) + at, len);
      __syncthreads();
      if (threadIdx.x == 0) {
        __threadfence_system();  // the chunk lands before the receiver sees the count
        oneshot::raiseFlag(wordsOf(a, t.peer) + me, c + 1);
      }
    } else {
      if (threadIdx.x == 0 && !awaitCount(a, ready + t.peer, c + 1, t.peer)) failed = true;
      __syncthreads();
      if (failed) break;
      const char* from = static_cast<const char*>(a.memory[me]) + a.layout.slotOffset(t.peer, c % 2);
      copyBlock(static_cast<char*>(t.buffer) + at, from, len);
      __syncthreads();
      // Every thread's loads of the slot are done (the barrier) before the sender may refill it.
      if (threadIdx.x == 0) oneshot::raiseFlag(wordsOf(a, t.peer) + n + me, c + 1);
    }
  }
  if (threadIdx.x == 0) (t.send ? sendSeq : recvSeq)[t.peer] = base + static_cast<std::uint32_t>(chunks);
}

}  // namespace

cudaError_t loadP2pKernels() { return loadKernels(p2pKernel); }

cudaError_t launchP2p(const P2pArgs& a, cudaStream_t stream) {
  if (a.taskCount == 0) return cudaSuccess;
  if (a.taskCount > kMaxP2pTasks || a.layout.slotBytes == 0) return cudaErrorInvalidValue;
  p2pKernel<<<a.taskCount, kP2pThreads, 0, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace gpupeer
