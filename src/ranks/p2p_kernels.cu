#include <algorithm>

#include "collectives/one_shot_device.cuh"
#include "cuda/signal_device.cuh"
#include "ranks/p2p_kernels.cuh"

namespace gpupeer {
namespace {

constexpr int kP2pThreads = 512;

__device__ std::uint32_t* wordsOf(const P2pArgs& a, int owner) {
  return reinterpret_cast<std::uint32_t*>(static_cast<char*>(a.memory[owner]) + a.layout.wordsOffset());
}

// The block's threads copy `lane`'s bytes of a chunk of `len` (P2pLayout::laneOf): 16 bytes at
// a time where both ends are 16-byte aligned, then the few bytes past the last whole 16, which
// lie in one granule; byte by byte otherwise.
__device__ void copyLane(char* dst, const char* src, std::size_t len, int lane) {
  if ((reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src)) % 16 == 0) {
    const std::size_t whole = len / 16 * 16;
    for (std::size_t i = threadIdx.x;; i += blockDim.x) {
      const std::size_t at = P2pLayout::laneUnit(lane, i, 16);
      if (at >= whole) break;
      *reinterpret_cast<uint4*>(dst + at) = *reinterpret_cast<const uint4*>(src + at);
    }
    const std::size_t at = whole + threadIdx.x;
    if (at < len && P2pLayout::laneOf(at) == lane) dst[at] = src[at];
  } else {
    for (std::size_t i = threadIdx.x;; i += blockDim.x) {
      const std::size_t at = P2pLayout::laneUnit(lane, i, 1);
      if (at >= len) break;
      dst[at] = src[at];
    }
  }
}

__global__ void __launch_bounds__(kP2pThreads) p2pKernel(P2pArgs a) {
  const P2pTask t = a.tasks[blockIdx.x / a.lanes];
  const int lane = blockIdx.x % a.lanes;
  if (lane >= a.layout.lanesFor(t.bytes)) return;  // nothing of this message is the lane's
  const int me = a.rank, n = a.layout.ranks;
  // This lane's words: [kind][rank][lane], kinds ready (by sender), ack (by receiver), sendSeq
  // and recvSeq.
  auto word = [&](int owner, int kind, int rank) { return wordsOf(a, owner) + (kind * n + rank) * kP2pLanes + lane; };
  const std::size_t slot = a.layout.slotBytes;
  const std::size_t chunks = (t.bytes + slot - 1) / slot;
  __shared__ bool failed;
  if (threadIdx.x == 0) failed = false;
  std::uint32_t* const seq = word(me, t.send ? 2 : 3, t.peer);
  const std::uint32_t base = *seq;
  __syncthreads();
  for (std::size_t k = 0; k < chunks && !failed; ++k) {
    const std::uint32_t c = base + static_cast<std::uint32_t>(k);
    const std::size_t at = k * slot, len = t.bytes - at < slot ? t.bytes - at : slot;
    if (t.send) {
      // Slot c % 2 is free once the receiver has taken chunk c - 2.
      if (threadIdx.x == 0 && !awaitAtLeast(word(me, 1, t.peer), c - 1, a, t.peer)) failed = true;
      __syncthreads();
      if (failed) break;
      char* to = static_cast<char*>(a.memory[t.peer]) + a.layout.slotOffset(me, c % 2);
      copyLane(to, static_cast<const char*>(t.buffer) + at, len, lane);
      publishToPeers(word(t.peer, 0, me), c + 1);  // the part lands before the receiver sees the count
    } else {
      if (threadIdx.x == 0 && !awaitAtLeast(word(me, 0, t.peer), c + 1, a, t.peer)) failed = true;
      __syncthreads();
      if (failed) break;
      const char* from = static_cast<const char*>(a.memory[me]) + a.layout.slotOffset(t.peer, c % 2);
      copyLane(static_cast<char*>(t.buffer) + at, from, len, lane);
      __syncthreads();
      // Every thread's loads of the slot are done (the barrier) before the sender may refill it.
      if (threadIdx.x == 0) releaseStore(word(t.peer, 1, me), c + 1);
    }
  }
  if (threadIdx.x == 0) *seq = base + static_cast<std::uint32_t>(chunks);
}

}  // namespace

cudaError_t loadP2pKernels() { return loadKernels(p2pKernel); }

cudaError_t launchP2p(const P2pArgs& a, cudaStream_t stream) {
  if (a.taskCount == 0) return cudaSuccess;
  if (a.taskCount > kMaxP2pTasks || a.layout.slotBytes == 0 || a.layout.slotBytes % (16 * kP2pLanes))
    return cudaErrorInvalidValue;
  P2pArgs b = a;
  b.lanes = 0;
  for (int i = 0; i < a.taskCount; ++i) b.lanes = std::max(b.lanes, a.layout.lanesFor(a.tasks[i].bytes));
  if (b.lanes == 0) return cudaSuccess;  // every task is empty
  p2pKernel<<<b.taskCount * b.lanes, kP2pThreads, 0, stream>>>(b);
  return cudaGetLastError();
}

}  // namespace gpupeer
