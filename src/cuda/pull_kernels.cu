// The pull kernel: each rank reads its peers' inputs straight from their buffers (SM loads
// over P2P) and reduces as it reads. Loads keep both directions of a link busy where pushed
// stores into scratch, a fence per step and a local finishing pass did not (bench/README.md).
#include <algorithm>
#include <type_traits>

#include "cuda/one_shot_device.cuh"
#include "cuda/reduce_math.cuh"

namespace gpupeer {
namespace {

using namespace oneshot;

// Units each thread keeps in flight per source.
constexpr int kPullDepth = 4;

// Block b of this rank meets block b of every peer: it raises `value` in their flags and waits
// for theirs. Block b reads only the units block b of each peer is responsible for, so a
// per-block meeting covers exactly the memory in question.
__device__ __forceinline__ void meetPeers(const OneShotArgs& a, std::uint32_t value, bool& failed) {
  __syncthreads();  // this block's loads are done before it tells anyone
  const int t = threadIdx.x;
  if (t < a.ranks && t != a.rank) {
    std::uint32_t* theirs = a.flags[t] + blockIdx.x * kMaxCommRanks + a.rank;
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(theirs), "r"(value) : "memory");
    if (!failed && !awaitFlag(a, a.flags[a.rank] + blockIdx.x * kMaxCommRanks + t, value, t)) failed = true;
  }
  __syncthreads();
}

// out[u] = reduction over ranks of source(rank)[u] for units [b, e), all threads of the block.
template <class T, class U>
__device__ __forceinline__ void pullUnits(const OneShotArgs& a, std::size_t b, std::size_t e) {
  // Reduce-scatter: rank r's output is chunk r of every input.
  const std::size_t chunk = a.op == CollOp::kReduceScatter ? a.rank * a.inStride : 0;
  auto source = [&](int r) { return reinterpret_cast<const U*>(static_cast<const T*>(a.peerIn[r]) + chunk); };
  reduceStrided<T, U, kThreads, kPullDepth>(a.redop, a.ranks, source, static_cast<U*>(a.out), b + threadIdx.x, e);
}

template <class T, bool kVectors>
__global__ void __launch_bounds__(kThreads) pullReduce(OneShotArgs a) {
  using U = std::conditional_t<kVectors, uint4, T>;
  constexpr std::size_t kLanes = sizeof(U) / sizeof(T);
  const std::uint32_t epoch = beginOperation(a);
  const std::uint32_t mark = epoch * kFlagStride;
  // Each block owns the same units on every rank; the last one also takes the elements after
  // the last whole unit.
  const std::size_t units = a.len / kLanes;
  const std::size_t per = (units + gridDim.x - 1) / gridDim.x;
  const std::size_t b = min(units, blockIdx.x * per), e = min(units, b + per);
  __shared__ bool failed;  // a peer timed out: do not wait for it a second time
  if (threadIdx.x == 0) failed = false;
  // Arrival: every peer's kernel has started, so the work before it on its stream (which
  // wrote its input) is complete.
  meetPeers(a, mark + 1, failed);
  if (a.op != CollOp::kReduce || a.rank == a.root) {
    pullUnits<T, U>(a, b, e);
    if (kVectors && blockIdx.x == gridDim.x - 1) pullUnits<T, T>(a, units * kLanes, a.len);
  }
  // Departure: no peer reads this rank's input any more, so the stream may go on.
  meetPeers(a, mark + 2, failed);
  endOperation(a, epoch);
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0; }

struct LaunchPull {
  const OneShotArgs& a;
  cudaStream_t stream;
  template <class T>
  cudaError_t operator()() const {
    // A block per 64 KiB up to one per SM of a 132-SM GPU (unless the caller says otherwise).
    const int most = a.maxBlocks > 0 ? std::min(a.maxBlocks, kMaxOneShotBlocks) : 132;
    const int blocks = static_cast<int>(std::clamp<std::size_t>(a.len * sizeof(T) / (64u << 10), 1, most));
    // 16-byte units need every source, the reduce-scatter chunk and the output aligned.
    bool vectors = aligned16(a.out) && (a.inStride * sizeof(T)) % 16 == 0;
    for (int r = 0; r < a.ranks; ++r) vectors = vectors && aligned16(a.peerIn[r]);
    return launchOneShotKernel(vectors ? pullReduce<T, true> : pullReduce<T, false>, a, blocks, stream);
  }
};

}  // namespace

cudaError_t launchPull(const OneShotArgs& a, DataType type, cudaStream_t stream) {
  if (a.len == 0) return cudaSuccess;
  if (a.ranks < 2 || a.ranks > kMaxCommRanks) return cudaErrorInvalidValue;
  return dispatchType(type, LaunchPull{a, stream});
}

}  // namespace gpupeer
