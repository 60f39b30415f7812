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

// The block moves `lane`'s part of every chunk of task t. `failed` (shared) is set where a wait
// gave up or the lengths differ; the caller's barrier follows.
__device__ void moveLane(const P2pArgs& a, const P2pTask& t, int lane, bool& failed) {
  const int me = a.rank, n = a.layout.ranks;
  // This lane's words: [kind][rank][lane], kinds ready (by sender), ack (by receiver), sendSeq
  // and recvSeq; and the header of each slot's chunk.
  auto word = [&](int owner, int kind, int rank) { return wordsOf(a, owner) + (kind * n + rank) * kP2pLanes + lane; };
  auto header = [&](int owner, int sender, std::uint32_t c) {
    return reinterpret_cast<volatile std::uint64_t*>(static_cast<char*>(a.memory[owner]) +
                                                     a.layout.headerOffset(sender, c % 2, lane));
  };
  const std::size_t slot = a.layout.slotBytes;
  const std::size_t chunks = (t.bytes + slot - 1) / slot;
  std::uint32_t* const seq = word(me, t.send ? 2 : 3, t.peer);
  const std::uint32_t base = *seq;
  // Every thread sees `failed` as the caller left it, and has read the count before thread 0
  // moves it on.
  __syncthreads();
  for (std::size_t k = 0; k < chunks && !failed; ++k) {
    const std::uint32_t c = base + static_cast<std::uint32_t>(k);
    const std::size_t at = k * slot, len = t.bytes - at < slot ? t.bytes - at : slot;
    if (t.send) {
      // Slot c % 2 is free once the receiver has taken chunk c - 2.
      if (threadIdx.x == 0) {
        if (awaitAtLeast(word(me, 1, t.peer), c - 1, a, t.peer))
          *header(t.peer, me, c) = t.bytes - at;  // published with the part below
        else
          failed = true;
      }
      __syncthreads();
      if (failed) break;
      char* to = static_cast<char*>(a.memory[t.peer]) + a.layout.slotOffset(me, c % 2);
      copyLane(to, static_cast<const char*>(t.buffer) + at, len, lane);
      publishToPeers(word(t.peer, 0, me), c + 1);  // the part lands before the receiver sees the count
    } else {
      if (threadIdx.x == 0 && !awaitAtLeast(word(me, 0, t.peer), c + 1, a, t.peer)) failed = true;
      __syncthreads();
      if (failed) break;
      // Thread 0 reads the chunk's header beside its share of the copy rather than before it (a
      // load in the way of every message). A chunk of another length is still copied, within
      // the slot and this receive's buffer, but never acknowledged.
      std::uint64_t left = 0;
      if (threadIdx.x == 0) left = *header(me, t.peer, c);
      const char* from = static_cast<const char*>(a.memory[me]) + a.layout.slotOffset(t.peer, c % 2);
      copyLane(static_cast<char*>(t.buffer) + at, from, len, lane);
      if (threadIdx.x == 0 && left != t.bytes - at) {
        const std::uint64_t mine = t.bytes - at;  // both beside the error word, for the host
        recordError(a.error, kLengthMismatchError | static_cast<std::uint32_t>(t.peer),
                    static_cast<std::uint32_t>(left), static_cast<std::uint32_t>(left >> 32),
                    static_cast<std::uint32_t>(mine), static_cast<std::uint32_t>(mine >> 32));
        failed = true;
      }
      __syncthreads();
      if (failed) break;
      // Every thread's loads of the slot are done (the barrier) before the sender may refill it.
      if (threadIdx.x == 0) releaseStore(word(t.peer, 1, me), c + 1);
    }
  }
  if (threadIdx.x == 0) *seq = base + static_cast<std::uint32_t>(chunks);
}

// Block b of a task moves lanes b, b + blocksPerTask, ... of those its message takes.
__global__ void __launch_bounds__(kP2pThreads) p2pKernel(P2pArgs a) {
  const P2pTask t = a.tasks[blockIdx.x / a.blocksPerTask];
  const int lanes = a.layout.lanesFor(t.bytes), first = blockIdx.x % a.blocksPerTask;
  if (first >= lanes) return;  // nothing of this message is the block's
  __shared__ bool failed;
  if (threadIdx.x == 0) failed = false;
  if (first + a.blocksPerTask >= lanes) {  // one lane: every group that fits the GPU as it is
    moveLane(a, t, first, failed);
    return;
  }
  for (int lane = first; lane < lanes; lane += a.blocksPerTask) {
    moveLane(a, t, lane, failed);
    __syncthreads();  // every thread sees `failed` as thread 0 left it
    if (failed) break;
  }
}

}  // namespace

cudaError_t loadP2pKernels() { return loadKernels(p2pKernel); }

cudaError_t launchP2p(const P2pArgs& a, cudaStream_t stream) {
  if (a.taskCount == 0) return cudaSuccess;
  if (a.taskCount > kMaxP2pTasks || a.layout.slotBytes == 0 || a.layout.slotBytes % (16 * kP2pLanes) ||
      a.blockBudget < 1)
    return cudaErrorInvalidValue;
  int mostLanes = 0;
  for (int i = 0; i < a.taskCount; ++i) mostLanes = std::max(mostLanes, a.layout.lanesFor(a.tasks[i].bytes));
  if (mostLanes == 0) return cudaSuccess;  // every task is empty
  P2pArgs b = a;
  b.blocksPerTask = p2pBlocksPerTask(a.taskCount, mostLanes, a.blockBudget);
  p2pKernel<<<b.taskCount * b.blocksPerTask, kP2pThreads, 0, stream>>>(b);
  return cudaGetLastError();
}

cudaError_t p2pBlockBudget(int device, int* blocks) {
  int perSm = 0, sms = 0;
  if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, p2pKernel, kP2pThreads, 0);
      e != cudaSuccess)
    return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess) return e;
  *blocks = std::max(1, perSm * sms / 2);
  return cudaSuccess;
}

}  // namespace gpupeer
