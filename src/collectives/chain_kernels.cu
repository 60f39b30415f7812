// The chain kernel: a broadcast or a reduce that passes from rank to rank, one step per block
// at a time, each step stored into the next rank's memory by SMs and announced by a flag in
// the next rank's memory (one_shot_device.cuh's words [block][sender]). A broadcast copies
// bytes, so one kernel serves every type.
#include <cstdint>
#include <type_traits>

#include "collectives/call_line.cuh"
#include "collectives/one_shot_device.cuh"
#include "collectives/reduce_math.cuh"

namespace gpupeer {
namespace {

using namespace oneshot;

// Units each thread keeps in flight.
constexpr int kChainDepth = 4;

static_assert(kMaxChainSteps + 2 < kFlagStride - 1, "a step's flag must stay below the departure's");

// Thread 0 waits for `sender`'s word in this rank's memory to reach `value`; the block
// continues together after it.
__device__ __forceinline__ void awaitStep(const OneShotArgs& a, int sender, std::uint32_t value, bool& failed) {
  if (threadIdx.x == 0) awaitUnlessFailed(a, flagOf(a, a.rank, sender), value, sender, failed);
}

// Bytes [b, e) of the step from the source to every target, U at a time (uint4 where every
// pointer is 16-byte aligned: then b is too; single bytes otherwise).
template <class U>
__device__ __forceinline__ void copyStep(const OneShotArgs& a, std::size_t b, std::size_t e) {
  const U* src = reinterpret_cast<const U*>(static_cast<const char*>(a.peerIn[0]) + b);
  const std::size_t units = (e - b) / sizeof(U);
  for (std::size_t u = threadIdx.x; u < units; u += kChainDepth * kChainThreads) {
    U x[kChainDepth];
#pragma unroll
    for (int i = 0; i < kChainDepth; ++i)
      if (u + i * kChainThreads < units) x[i] = src[u + i * kChainThreads];
    for (int k = 0; k < a.targetCount; ++k) {
      U* dst = reinterpret_cast<U*>(static_cast<char*>(a.targets[k]) + b);
#pragma unroll
      for (int i = 0; i < kChainDepth; ++i)
        if (u + i * kChainThreads < units) dst[u + i * kChainThreads] = x[i];
    }
  }
  // The message's last bytes after the whole units (only the final step has any).
  const std::size_t tail = b + units * sizeof(U);
  if (threadIdx.x < e - tail)
    for (int k = 0; k < a.targetCount; ++k)
      static_cast<char*>(a.targets[k])[tail + threadIdx.x] = static_cast<const char*>(a.peerIn[0])[tail + threadIdx.x];
}

// One step of the reduce: out = partial (what the previous rank left) combined with this rank's
// input, over bytes [b, e) of the message; the first rank has no partial and copies its input.
// Partials travel as the type itself; avg divides on the last rank only.
template <class T, class U>
__device__ __forceinline__ void reduceStep(const OneShotArgs& a, const char* partial, char* out, std::size_t b,
                                           std::size_t e, bool last) {
  const U* in = reinterpret_cast<const U*>(static_cast<const char*>(a.peerIn[0]) + b);
  const U* part = reinterpret_cast<const U*>(partial);
  U* dst = reinterpret_cast<U*>(out);
  const std::size_t units = (e - b) / sizeof(U);
  const RedOp op = a.redop == RedOp::kAvg && !last ? RedOp::kSum : a.redop;
  withRedOp(op, [&](auto opTag) {
    constexpr RedOp kOp = decltype(opTag)::value;
    for (std::size_t u = threadIdx.x; u < units; u += kChainDepth * kChainThreads) {
      U x[kChainDepth], p[kChainDepth];
#pragma unroll
      for (int i = 0; i < kChainDepth; ++i)
        if (u + i * kChainThreads < units) {
          x[i] = in[u + i * kChainThreads];
          if (part) p[i] = part[u + i * kChainThreads];
        }
#pragma unroll
      for (int i = 0; i < kChainDepth; ++i)
        if (u + i * kChainThreads < units) {
          if (!part) {
            dst[u + i * kChainThreads] = x[i];
            continue;
          }
          UnitAcc<T, U> acc;
          acc.set(p[i]);
          acc.template addAs<kOp>(x[i]);
          dst[u + i * kChainThreads] = acc.template resultAs<kOp>(a.ranks);
        }
    }
  });
}

template <class U>
__global__ void __launch_bounds__(kChainThreads) chainBroadcast(OneShotArgs a) {
  const std::uint32_t epoch = beginOperation(a);
  const std::uint32_t mark = epoch * kFlagStride;
  __shared__ bool failed;  // a peer timed out: do not wait for it again
  if (threadIdx.x == 0) failed = false;
  // Arrival: every peer's kernel has started, so the next rank's output is free and the root's
  // input written.
  meetPeers(a, mark + 1, failed);
  const std::size_t step = a.chainStepBytes;
  for (std::uint32_t s = 0;; ++s) {
    const std::size_t b = (static_cast<std::size_t>(s) * gridDim.x + blockIdx.x) * step;
    if (b >= a.len) break;
    const std::uint32_t value = mark + 2 + s;  // flags only grow: steps stay below kFlagStride - 2
    if (a.chainPrev >= 0) {
      awaitStep(a, a.chainPrev, value, failed);
      __syncthreads();  // the step has landed in this rank's output before anyone reads it
    }
    if (a.targetCount) copyStep<U>(a, b, min(a.len, b + step));
    // The step's stores into the next rank's output land before its flag there.
    if (a.chainNext >= 0) publishToPeers(flagOf(a, a.chainNext, a.rank), value);
  }
  // No departure barrier: each rank reads only its own memory and the last rank's kernel ends
  // once every step has landed in its output.
  endOperation(a);
}

// `bytes` from `src` to `next` (the next rank's scratch; null on the chain's last rank) and
// to `out` (this rank's output; null where the data is there already), U at a time, then the
// bytes after the last whole unit one at a time.
template <class U>
__device__ __forceinline__ void forwardStep(const char* src, char* next, char* out, std::size_t bytes) {
  const std::size_t units = bytes / sizeof(U);
  const U* s = reinterpret_cast<const U*>(src);
  for (std::size_t u = threadIdx.x; u < units; u += kChainDepth * kChainThreads) {
    U x[kChainDepth];
#pragma unroll
    for (int i = 0; i < kChainDepth; ++i)
      if (u + i * kChainThreads < units) x[i] = s[u + i * kChainThreads];
#pragma unroll
    for (int i = 0; i < kChainDepth; ++i)
      if (u + i * kChainThreads < units) {
        if (next) reinterpret_cast<U*>(next)[u + i * kChainThreads] = x[i];
        if (out) reinterpret_cast<U*>(out)[u + i * kChainThreads] = x[i];
      }
  }
  for (std::size_t i = units * sizeof(U) + threadIdx.x; i < bytes; i += kChainThreads) {
    if (next) next[i] = src[i];
    if (out) out[i] = src[i];
  }
}

// A chain whose steps pass through the next rank's scratch, in positions that each block
// cycles through: the reduce (each rank combines the previous rank's partial with its input
// and hands the result on; the root, last, writes its output) and the broadcast of ranks in
// other processes (no rank reaches the next one's output: each takes the step from its
// scratch, or the root from its input, into the next rank's scratch and its own output).
template <class T, bool kVectors>
__global__ void __launch_bounds__(kChainThreads) chainStaged(OneShotArgs a) {
  using U = std::conditional_t<kVectors, uint4, T>;
  const std::uint32_t epoch = beginOperation(a);
  // Ranks in other processes show each other their calls (call_line.cuh) and compare them
  // before the first wait, which a peer making another call might never meet.
  announceCall(a, epoch);
  if (threadIdx.x < a.ranks && threadIdx.x != a.rank) checkCall(a, epoch, threadIdx.x);
  const std::uint32_t mark = epoch * kFlagStride;
  __shared__ bool failed;
  if (threadIdx.x == 0) failed = false;
  // Arrival: every peer's kernel has started, so its input is written and nobody still reads
  // the scratch that the next rank's kernel will read.
  meetPeers(a, mark + 1, failed);
  const std::size_t step = a.chainStepBytes, positions = a.chainPositions;
  const bool last = a.chainNext < 0, reduce = a.op == CollOp::kReduce;
  for (std::uint32_t s = 0;; ++s) {
    const std::size_t b = (static_cast<std::size_t>(s) * gridDim.x + blockIdx.x) * step;
    if (b >= a.len) break;
    const std::size_t slot = (blockIdx.x * positions + s % positions) * step;
    const std::uint32_t value = mark + 2 + s;
    // The previous rank's step has landed; the next rank has read what this step's position
    // held `positions` steps ago (thread 1 waits for that while thread 0 waits here).
    if (a.chainPrev >= 0) awaitStep(a, a.chainPrev, value, failed);
    if (!last && s >= positions && threadIdx.x == 1)
      awaitUnlessFailed(a, flagOf(a, a.rank, a.chainNext), value - positions, a.chainNext, failed);
    __syncthreads();
    const char* held = a.chainPrev >= 0 ? static_cast<const char*>(a.scratch[a.rank]) + slot : nullptr;
    char* next = last ? nullptr : static_cast<char*>(a.scratch[a.chainNext]) + slot;
    const std::size_t e = min(a.len, b + step);
    if (reduce) {
      char* out = last ? static_cast<char*>(a.targets[0]) + b : next;
      const std::size_t whole = b + (e - b) / sizeof(U) * sizeof(U);
      reduceStep<T, U>(a, held, out, b, whole, last);
      if (kVectors && whole < e)  // the message's last elements, one at a time
        reduceStep<T, T>(a, held ? held + (whole - b) : nullptr, out + (whole - b), whole, e, last);
    } else {
      const char* src = held ? held : static_cast<const char*>(a.peerIn[0]) + b;
      forwardStep<U>(src, next, a.targetCount ? static_cast<char*>(a.targets[0]) + b : nullptr, e - b);
    }
    __syncthreads();  // this step's loads are done and its stores issued
    if (threadIdx.x == 0) {
      // The step's stores into the next rank's scratch land before its flag there; the
      // previous rank hears that this rank's loads of the position are done.
      if (!last) releaseStore(flagOf(a, a.chainNext, a.rank), value);
      if (a.chainPrev >= 0) releaseStore(flagOf(a, a.chainPrev, a.rank), value);
    }
  }
  // Departure: block b of every rank has read every step of its positions, so that no later
  // kernel of any rank (a one-shot push into the scratch, which takes no barrier first)
  // overwrites one unread; this kernel ends once every block has met its peers. The value
  // lies above every step's flag of this operation.
  meetPeers(a, mark + kFlagStride - 1, failed);
  endOperation(a);
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0; }

struct LaunchChainStaged {
  const OneShotArgs& a;
  cudaStream_t stream;
  template <class T>
  cudaError_t operator()() const {
    bool vectors = aligned16(a.peerIn[0]) && aligned16(a.targets[0]);
    for (int r = 0; r < a.ranks; ++r) vectors = vectors && aligned16(a.scratch[r]);
    return launchOneShotKernel(vectors ? chainStaged<T, true> : chainStaged<T, false>, a, a.pullBlocks, stream,
                               kChainThreads);
  }
};

struct LoadChainStaged {
  template <class T>
  cudaError_t operator()() const {
    return loadKernels(chainStaged<T, true>, chainStaged<T, false>);
  }
};

}  // namespace

cudaError_t loadChainKernels() {
  if (cudaError_t e = forEveryType(LoadChainStaged{}); e != cudaSuccess) return e;
  return loadKernels(chainBroadcast<uint4>, chainBroadcast<unsigned char>);
}

cudaError_t launchChain(const OneShotArgs& a, DataType type, cudaStream_t stream) {
  if (a.ranks < 2 || a.ranks > kMaxCommRanks || a.pullBlocks < 1 || a.pullBlocks > kMaxOneShotBlocks ||
      a.targetCount < 0 || a.targetCount > 2 || a.chainStepBytes == 0 || a.chainStepBytes % 16 ||
      a.len > a.chainStepBytes * a.pullBlocks * kMaxChainSteps)
    return cudaErrorInvalidValue;
  if (a.op == CollOp::kReduce) {
    if (a.chainPositions == 0 || a.targetCount != 1) return cudaErrorInvalidValue;
    return dispatchType(type, LaunchChainStaged{a, stream});
  }
  // A broadcast through the scratch: bytes, whatever the type.
  if (a.chainPositions > 0) return dispatchType(DataType::kUInt8, LaunchChainStaged{a, stream});
  bool vectors = aligned16(a.peerIn[0]);
  for (int k = 0; k < a.targetCount; ++k) vectors = vectors && aligned16(a.targets[k]);
  return launchOneShotKernel(vectors ? chainBroadcast<uint4> : chainBroadcast<unsigned char>, a, a.pullBlocks, stream,
                             kChainThreads);
}

}  // namespace gpupeer
