// The chain kernel: a broadcast that passes from rank to rank, one step per block at a time,
// each step stored into the next rank's output by SMs and announced by a flag in the next
// rank's memory (one_shot_device.cuh's words [block][sender]). Bytes are copied, so one kernel
// serves every type.
#include <cstdint>
#include <type_traits>

#include "cuda/one_shot_device.cuh"

namespace gpupeer {
namespace {

using namespace oneshot;

// Units each thread keeps in flight.
constexpr int kChainDepth = 4;

// Bytes [b, e) of the step from the source to every target, U at a time (uint4 where every
// pointer is 16-byte aligned: then b is too; single bytes otherwise).
template <class U>
__device__ __forceinline__ void copyStep(const OneShotArgs& a, std::size_t b, std::size_t e) {
  const U* src = reinterpret_cast<const U*>(static_cast<const char*>(a.peerIn[0]) + b);
  const std::size_t units = (e - b) / sizeof(U);
  for (std::size_t u = threadIdx.x; u < units; u += kChainDepth * kThreads) {
    U x[kChainDepth];
#pragma unroll
    for (int i = 0; i < kChainDepth; ++i)
      if (u + i * kThreads < units) x[i] = src[u + i * kThreads];
    for (int k = 0; k < a.targetCount; ++k) {
      U* dst = reinterpret_cast<U*>(static_cast<char*>(a.targets[k]) + b);
#pragma unroll
      for (int i = 0; i < kChainDepth; ++i)
        if (u + i * kThreads < units) dst[u + i * kThreads] = x[i];
    }
  }
  // The message's last bytes after the whole units (only the final step has any).
  const std::size_t tail = b + units * sizeof(U);
  if (threadIdx.x < e - tail)
    for (int k = 0; k < a.targetCount; ++k)
      static_cast<char*>(a.targets[k])[tail + threadIdx.x] = static_cast<const char*>(a.peerIn[0])[tail + threadIdx.x];
}

template <class U>
__global__ void __launch_bounds__(kThreads) chainBroadcast(OneShotArgs a) {
  const std::uint32_t epoch = beginOperation(a);
  const std::uint32_t mark = epoch * kFlagStride;
  __shared__ bool failed;  // a peer timed out: do not wait for it again
  if (threadIdx.x == 0) failed = false;
  // Arrival: every peer's kernel has started, so the next rank's output is free and the root's
  // input written.
  meetPeers(a, mark + 1, false, failed);
  const std::size_t step = a.chainStepBytes;
  for (std::uint32_t s = 0;; ++s) {
    const std::size_t b = (static_cast<std::size_t>(s) * gridDim.x + blockIdx.x) * step;
    if (b >= a.len) break;
    const std::size_t e = min(a.len, b + step);
    const std::uint32_t value = mark + 2 + s;  // flags only grow: steps stay below kFlagStride - 2
    if (a.chainPrev >= 0) {
      if (threadIdx.x == 0 && !failed &&
          !awaitFlag(a, a.flags[a.rank] + blockIdx.x * kMaxCommRanks + a.chainPrev, value, a.chainPrev))
        failed = true;
      __syncthreads();  // the step has landed in this rank's output before anyone reads it
    }
    if (a.targetCount) copyStep<U>(a, b, e);
    if (a.chainNext >= 0) {
      __syncthreads();  // every thread's stores are issued
      if (threadIdx.x == 0) {
        __threadfence_system();
        std::uint32_t* theirs = a.flags[a.chainNext] + blockIdx.x * kMaxCommRanks + a.rank;
        asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(theirs), "r"(value) : "memory");
      }
    }
  }
  // No departure barrier: each rank reads only its own memory and the last rank's kernel ends
  // once every step has landed in its output.
  endOperation(a, epoch);
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0; }

static_assert(kMaxChainSteps + 2 < kFlagStride, "a step's flag must stay within the operation's range");

}  // namespace

cudaError_t launchChain(const OneShotArgs& a, cudaStream_t stream) {
  if (a.ranks < 2 || a.ranks > kMaxCommRanks || a.pullBlocks < 1 || a.pullBlocks > kMaxOneShotBlocks ||
      a.targetCount < 0 || a.targetCount > 2 || a.chainStepBytes == 0 || a.chainStepBytes % 16 ||
      a.len > a.chainStepBytes * a.pullBlocks * kMaxChainSteps)
    return cudaErrorInvalidValue;
  bool vectors = aligned16(a.peerIn[0]);
  for (int k = 0; k < a.targetCount; ++k) vectors = vectors && aligned16(a.targets[k]);
  return launchOneShotKernel(vectors ? chainBroadcast<uint4> : chainBroadcast<unsigned char>, a, a.pullBlocks, stream);
}

}  // namespace gpupeer
