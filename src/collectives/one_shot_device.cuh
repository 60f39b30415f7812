#pragma once
// Device-side pieces shared by the two one-shot kernels (one_shot_kernels.cu: flags and
// scratch slots; one_shot_lines.cu: lines that carry their own flags). Internal to the library.

#include <cstdint>

#include "collectives/one_shot_kernels.cuh"
#include "cuda/signal_device.cuh"

namespace gpupeer {
namespace oneshot {

inline constexpr int kThreads = 512;

// Whether a wait of this rank's kernels gives up (signal_device.cuh).
__device__ __forceinline__ bool gaveUp(const OneShotArgs& a, unsigned long long start, int sender) {
  return waitGivesUp(a.error, a.timeoutNs, a.abortWord, start, sender);
}

// The operation counter grows by kEpochStride per operation: every block adds one when it is
// done and block 0 adds the rest of the stride. During an operation the counter therefore lies
// in [C, C + kEpochStride) whichever blocks have finished, and C / kEpochStride is the number
// of operations before it, exactly, for every block that reads it. No block waits for
// another, which measured faster (docs/collectives.md, tuned constants). Larger than any grid
// (kMaxOneShotBlocks).
inline constexpr unsigned long long kEpochStride = 1024;
static_assert(kEpochStride > kMaxOneShotBlocks, "every block's share must fit in one stride");

// Start of every one-shot kernel: wait for the previous kernel on the stream (launched with
// programmatic dependent launch, this kernel may be resident before that one ends: its launch
// latency hides behind the previous kernel), let the next one launch early in turn, and read
// this operation's epoch (the previous kernel's additions are visible once the wait returns).
// Every thread reads the counter itself (no block-wide sync here: one cost ~0.2 us per small
// all-reduce).
__device__ __forceinline__ std::uint32_t beginOperation(const OneShotArgs& a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
  const unsigned long long done = *static_cast<volatile unsigned long long*>(a.opCounter);
  return static_cast<std::uint32_t>(done / kEpochStride) + 1;
}

// The block's share of the counter, after all its threads have read it (the barrier). The
// result is unused, so the add compiles to a reduction: no round trip, no fence.
__device__ __forceinline__ void endOperation(const OneShotArgs& a) {
  __syncthreads();
  if (threadIdx.x != 0) return;
  atomicAdd(a.opCounter, blockIdx.x == 0 ? kEpochStride - (gridDim.x - 1) : 1ull);
}

// Flags in peer memory ([block][sender] words per rank) hold epoch x kFlagStride + step: they
// only grow (modulo 2^32, compared by signed difference), so the same words serve every
// operation, every kernel that uses them and every replay of a CUDA graph.
inline constexpr std::uint32_t kFlagStride = 1u << 12;

// Waits until *flag reaches `want` (acquire); false, with the sender recorded, after the
// barrier timeout or an abort.
__device__ __forceinline__ bool awaitFlag(const OneShotArgs& a, const std::uint32_t* flag, std::uint32_t want,
                                          int sender) {
  return awaitAtLeast(flag, want, a, sender);
}

// This block's word for `sender` in rank `owner`'s flags ([block][sender]).
__device__ __forceinline__ std::uint32_t* flagOf(const OneShotArgs& a, int owner, int sender) {
  return a.flags[owner] + blockIdx.x * kMaxCommRanks + sender;
}

// Block b of this rank meets block b of every peer: it raises `value` in their flags and waits
// for theirs. In the pull and chain kernels block b reads and writes only what block b of each
// rank is responsible for, so a per-block meeting covers exactly the memory in question.
// `fence`: this block stored into peers' memory, and those stores must land before a peer that
// sees the flag goes on (publish).
__device__ __forceinline__ void meetPeers(const OneShotArgs& a, std::uint32_t value, bool fence, bool& failed) {
  __syncthreads();  // this block's loads and stores are done before it tells anyone
  const int t = threadIdx.x;
  if (t < a.ranks && t != a.rank) {
    publish(flagOf(a, t, a.rank), value, fence);
    if (!failed && !awaitFlag(a, flagOf(a, a.rank, t), value, t)) failed = true;
  }
  __syncthreads();
}

// Whether `sender` sends data to `receiver` in this operation.
__device__ __forceinline__ bool dataFlows(const OneShotArgs& a, int sender, int receiver) {
  switch (a.op) {
    case CollOp::kBroadcast: return sender == a.root;
    case CollOp::kReduce: return receiver == a.root;
    case CollOp::kSendRecv: return receiver == (sender + 1) % a.ranks;
    default: return true;
  }
}

// The input chunk that goes to `dst`: its own chunk for reduce-scatter and alltoall.
__device__ __forceinline__ int chunkFor(const OneShotArgs& a, int dst) {
  return a.op == CollOp::kReduceScatter || a.op == CollOp::kAllToAll ? dst : 0;
}

template <class T, class U>
__device__ __forceinline__ const U* inChunk(const OneShotArgs& a, int q) {
  return reinterpret_cast<const U*>(static_cast<const T*>(a.in) + q * a.inStride);
}
template <class T, class U>
__device__ __forceinline__ U* outChunk(const OneShotArgs& a, int q) {
  return reinterpret_cast<U*>(static_cast<T*>(a.out) + q * a.outStride);
}

// The regular variant's roles and copies, shared by the one-shot and relay kernels.
// Warps 0-7 of a block push, warps 8-15 finish.
inline constexpr int kRoleThreads = kThreads / 2;
// Units each pushing thread keeps in flight: four carried more than one (docs/collectives.md,
// tuned constants).
inline constexpr int kRoleCopyDepth = 4;
// Synchronises the 256 threads of one role (named barriers 1 and 2; 0 is __syncthreads).
__device__ __forceinline__ void roleBarrier(int id) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(kRoleThreads) : "memory");
}

template <class T>
__device__ __forceinline__ T* slot(const OneShotArgs& a, int owner, std::uint32_t parity, int sender) {
  char* base = static_cast<char*>(a.scratch[owner]) + (parity * a.ranks + sender) * a.slotBytes;
  return reinterpret_cast<T*>(base);
}

// dst[u] = src[u] for units [b, e), thread t of a role, kRoleCopyDepth loads in flight per thread.
template <class U>
__device__ __forceinline__ void copyUnits(U* dst, const U* src, std::size_t b, std::size_t e, int t) {
  for (std::size_t u = b + t; u < e; u += kRoleCopyDepth * kRoleThreads) {
    U x[kRoleCopyDepth];
#pragma unroll
    for (int i = 0; i < kRoleCopyDepth; ++i)
      if (u + i * kRoleThreads < e) x[i] = src[u + i * kRoleThreads];
#pragma unroll
    for (int i = 0; i < kRoleCopyDepth; ++i)
      if (u + i * kRoleThreads < e) dst[u + i * kRoleThreads] = x[i];
  }
}

}  // namespace oneshot

/// The low-latency kernel's launch (one_shot_lines.cu); launchOneShot calls it when a.lines.
cudaError_t launchOneShotLines(const OneShotArgs& a, DataType type, cudaStream_t stream);

/// The 128-byte variant's launch (one_shot_lines128.cu); launchOneShot calls it when
/// a.lines128.
cudaError_t launchOneShotLines128(const OneShotArgs& a, DataType type, cudaStream_t stream);

/// Loads `kernels` into the current device's context now. Under lazy loading (CUDA's default
/// since 12.2) a kernel is loaded at its first launch, and loading waits for the work the
/// context has in flight: a rank whose first launch of a kernel comes while a peer's kernel of
/// the same process waits for it (ranks as threads) would stall until that wait gives up.
/// NCCL loads its kernels at init for the same reason. cudaFuncGetAttributes loads.
template <class... Kernels>
cudaError_t loadKernels(Kernels... kernels) {
  cudaFuncAttributes attributes{};
  for (const void* k : {reinterpret_cast<const void*>(kernels)...})
    if (cudaError_t e = cudaFuncGetAttributes(&attributes, k); e != cudaSuccess) return e;
  return cudaSuccess;
}

/// Each variant's kernels for every element type, loaded (see loadKernels).
cudaError_t loadOneShotLinesKernels();
cudaError_t loadOneShotLines128Kernels();

/// Launches `kernel(a)` with a.earlyLaunch's programmatic dependent launch.
cudaError_t launchOneShotKernel(void (*kernel)(OneShotArgs), const OneShotArgs& a, int blocks, cudaStream_t stream,
                                int threads = oneshot::kThreads);

}  // namespace gpupeer
