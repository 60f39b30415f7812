// The pull kernel: each rank reads its part straight from its sources' buffers (SM loads over
// P2P), reduces as it reads and writes the result to its targets, local or a peer's
// (collectives/pull_plan.hpp says which). Loads keep both directions of a link busy where pushed
// stores into scratch, a fence per step and a local finishing pass did not (docs/collectives.md,
// the pull row).
#include <algorithm>
#include <type_traits>

#include "collectives/call_line.cuh"
#include "collectives/one_shot_device.cuh"
#include "collectives/reduce_math.cuh"

namespace gpupeer {
namespace {

using namespace oneshot;

// Units each thread keeps in flight per source, and sources whose loads it issues together
// before it combines any; one source at a time measured no faster (docs/collectives.md, tuned
// constants).
constexpr int kPullDepth = 4;
// Lanes of a reduced unit in flight per source: 16, not the one-shot finisher's 32. Its sources
// are loaded several at a time (kSourceBatch), and with 32 its bf16 kernel on 16-byte units held
// 128 registers a thread and spilled 3 KiB of them (ptxas -v, sm_90), where with 16 it fits in
// 124 without spilling.
constexpr int kPullReduceLanes = 16;
constexpr int kSourceBatch = 4;
// Units in flight per thread where the part has one source (a copy).
constexpr int kCopyDepth = 8;

// Units [b, e) of the part, all threads of the block: reduced over the sources in rank order
// (or copied from the one source) and stored to every target. src and dst: the block's copy of
// the part's sources and targets (resolved where they are peers' registered buffers).
// kOp: the operator, fixed per instantiation (reduce_math.cuh's combineAs says why).
template <class T, class U, RedOp kOp>
__device__ __forceinline__ void pullUnits(const OneShotArgs& a, const void* const* src, void* const* dst, std::size_t b,
                                          std::size_t e) {
  auto target = [&](int k) { return static_cast<U*>(dst[k]); };
  if (a.sources == 1) {
    const U* from = static_cast<const U*>(src[0]);
    for (std::size_t u = b + threadIdx.x; u < e; u += kCopyDepth * kThreads) {
      U x[kCopyDepth];
#pragma unroll
      for (int i = 0; i < kCopyDepth; ++i)
        if (u + i * kThreads < e) x[i] = from[u + i * kThreads];
      for (int k = 0; k < a.targetCount; ++k) {
#pragma unroll
        for (int i = 0; i < kCopyDepth; ++i)
          if (u + i * kThreads < e) target(k)[u + i * kThreads] = x[i];
      }
    }
    return;
  }
  constexpr int kDepth = reduceDepth<T, U>(kPullDepth, kPullReduceLanes);
  for (std::size_t u = b + threadIdx.x; u < e; u += kDepth * kThreads) {
    UnitAcc<T, U> acc[kDepth];
    for (int first = 0; first < a.sources; first += kSourceBatch) {
      U x[kSourceBatch][kDepth];
#pragma unroll
      for (int j = 0; j < kSourceBatch; ++j)
        if (first + j < a.sources) {
          const U* from = static_cast<const U*>(src[first + j]);
#pragma unroll
          for (int i = 0; i < kDepth; ++i)
            if (u + i * kThreads < e) x[j][i] = from[u + i * kThreads];
        }
#pragma unroll
      for (int j = 0; j < kSourceBatch; ++j)
        if (first + j < a.sources) {
#pragma unroll
          for (int i = 0; i < kDepth; ++i)
            if (u + i * kThreads < e) acc[i].template takeAs<kOp>(first + j, x[j][i]);
        }
    }
#pragma unroll
    for (int i = 0; i < kDepth; ++i)
      if (u + i * kThreads < e) {
        const U v = acc[i].template resultAs<kOp>(a.sources);
        for (int k = 0; k < a.targetCount; ++k) target(k)[u + i * kThreads] = v;
      }
  }
}

// The block's share of the part in units U: one range, or (a.pullTileBytes) every gridDim-th
// tile, so that the whole grid works within a window of the buffers at any time. The last
// block also takes the elements after the last whole unit. (Block b meets block b of every
// peer, but any mapping is safe: a kernel ends only after each of its blocks saw the same
// block of every peer depart, so after every block of every peer did.)
template <class T, class U, RedOp kOp>
__device__ __forceinline__ void pullShare(const OneShotArgs& a, const void* const* src, void* const* dst) {
  constexpr std::size_t kLanes = sizeof(U) / sizeof(T);
  const std::size_t units = a.len / kLanes;
  const std::size_t per = (units + gridDim.x - 1) / gridDim.x;
  const std::size_t b = min(units, blockIdx.x * per), e = min(units, b + per);
  const std::size_t tile = a.pullTileBytes / sizeof(U);
  if (tile)
    for (std::size_t t = blockIdx.x * tile; t < units; t += gridDim.x * tile)
      pullUnits<T, U, kOp>(a, src, dst, t, min(units, t + tile));
  else
    pullUnits<T, U, kOp>(a, src, dst, b, e);
  if (kLanes > 1 && blockIdx.x == gridDim.x - 1) pullUnits<T, T, kOp>(a, src, dst, units * kLanes, a.len);
}

__host__ __device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0;
}

template <class T, bool kVectors>
__global__ void __launch_bounds__(kThreads) pullReduce(OneShotArgs a) {
  const std::uint32_t epoch = beginOperation(a);
  announceCall(a, epoch);
  const std::uint32_t mark = epoch * kFlagStride;
  __shared__ bool failed;  // a peer timed out: do not wait for it a second time
  __shared__ bool skip;    // with registered buffers, this rank's operation failed: move no data
  __shared__ bool vectors;
  __shared__ const void* src[kMaxCommRanks];
  __shared__ void* dst[kMaxCommRanks];
  __shared__ char *sendOf[kMaxCommRanks], *recvOf[kMaxCommRanks];
  const int t = threadIdx.x;
  if (t == 0) failed = false;
  // With registered buffers, every rank's, as its call line shows them (which also tells that
  // its call is this one).
  if (a.registered && t < a.ranks) registeredBuffersOf(a, epoch, t, sendOf[t], recvOf[t]);
  __syncthreads();
  if (t < a.sources) {
    const int r = a.sourceRank[t];
    src[t] =
        !a.registered ? a.peerIn[t] : (sendOf[r] ? sendOf[r] + reinterpret_cast<std::uintptr_t>(a.peerIn[t]) : nullptr);
  }
  if (t < a.targetCount) {
    const int r = a.targetRank[t];
    dst[t] = !a.registered ? a.targets[t]
                           : (recvOf[r] ? recvOf[r] + reinterpret_cast<std::uintptr_t>(a.targets[t]) : nullptr);
  }
  // Arrival: every peer's kernel has started, so the work before it on its stream (which
  // wrote its input and last used its output) is complete.
  meetPeers(a, mark + 1, failed);
  if (t == 0) {
    // A peer's buffers that could not be resolved (null) must not be touched; the one-process
    // communicator moves its data whatever happened (its waits are bounded alone).
    skip = a.registered && *static_cast<volatile std::uint32_t*>(a.error) != 0;
    bool all = kVectors;
    for (int k = 0; k < a.sources; ++k) all = all && aligned16(src[k]);
    for (int k = 0; k < a.targetCount; ++k) all = all && aligned16(dst[k]);
    vectors = all;
  }
  __syncthreads();
  if (a.len && !skip)
    withRedOp(a.redop, [&](auto op) {
      constexpr RedOp kOp = decltype(op)::value;
      // 16-byte units where every pointer allows them (the host knows it, except of peers'
      // registered buffers, which only the kernel sees).
      if constexpr (kVectors) {
        if (vectors) {
          pullShare<T, uint4, kOp>(a, src, dst);
          return;
        }
      }
      pullShare<T, T, kOp>(a, src, dst);
    });
  // Departure: no peer reads this rank's input or writes its output any more, so the stream
  // may go on.
  meetPeers(a, mark + 2, failed);
  endOperation(a);
}

struct LaunchPull {
  const OneShotArgs& a;
  cudaStream_t stream;
  template <class T>
  cudaError_t operator()() const {
    // 16-byte units need every source and target aligned; peers' registered buffers are
    // known in the kernel only, which then decides.
    bool vectors = true;
    for (int r = 0; r < a.sources; ++r) vectors = vectors && aligned16(a.peerIn[r]);
    for (int k = 0; k < a.targetCount; ++k) vectors = vectors && aligned16(a.targets[k]);
    vectors = vectors || a.registered;
    return launchOneShotKernel(vectors ? pullReduce<T, true> : pullReduce<T, false>, a, a.pullBlocks, stream);
  }
};

struct LoadPull {
  template <class T>
  cudaError_t operator()() const {
    return loadKernels(pullReduce<T, true>, pullReduce<T, false>);
  }
};

}  // namespace

cudaError_t loadPullKernels() { return forEveryType(LoadPull{}); }

cudaError_t launchPull(const OneShotArgs& a, DataType type, cudaStream_t stream) {
  if (a.ranks < 2 || a.ranks > kMaxCommRanks || a.sources < 0 || a.sources > kMaxCommRanks || a.targetCount < 0 ||
      a.targetCount > kMaxCommRanks || a.pullBlocks < 1 || a.pullBlocks > kMaxOneShotBlocks ||
      (a.len && (a.sources < 1 || a.targetCount < 1)))
    return cudaErrorInvalidValue;
  return dispatchType(type, LaunchPull{a, stream});
}

}  // namespace gpupeer
