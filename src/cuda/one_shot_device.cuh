#pragma once
// Device-side pieces shared by the two one-shot kernels (one_shot_kernels.cu: flags and
// scratch slots; one_shot_lines.cu: lines that carry their own flags). Internal to the library.

#include <cstdint>

#include "cuda/one_shot_kernels.cuh"

namespace gpupeer {
namespace oneshot {

inline constexpr int kThreads = 512;

__device__ __forceinline__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Waits shorter than this never read the abort word. It lies in mapped host memory: a read
// crosses PCIe, and every polling thread of every rank reading it every few polls (hundreds
// of threads per GPU in the one-shot kernel's regular variant) kept the waits themselves
// slow. An abort is noticed within this much of a wait's start.
inline constexpr unsigned long long kAbortPollAfterNs = 200'000;

// Whether a wait that has lasted `waited` ns was aborted (RankCommunicator::abort() from
// another thread wrote the host word).
__device__ __forceinline__ bool abortRequested(const volatile std::uint32_t* abortWord, unsigned long long waited) {
  return abortWord && waited > kAbortPollAfterNs && *abortWord != 0;
}

// Whether a wait that began at `start` gives up: the peer did not arrive within `timeoutNs`,
// or the communicator was aborted (abortRequested), or an earlier wait gave up. Records why
// in *error (the first reason wins): 1 + the sender waited for, or kAbortedError.
__device__ __forceinline__ bool waitGivesUp(std::uint32_t* error, unsigned long long timeoutNs,
                                            const volatile std::uint32_t* abortWord, unsigned long long start,
                                            int sender) {
  // An earlier wait of this rank gave up already: its peers are out of step, so this one gives
  // up at once too (a dead peer costs one bound, not one per operation queued behind it).
  if (*static_cast<volatile std::uint32_t*>(error) != 0) return true;
  const unsigned long long waited = now() - start;
  const bool aborted = abortRequested(abortWord, waited);
  if (!aborted && waited <= timeoutNs) return false;
  atomicCAS(error, 0u, aborted ? kAbortedError : static_cast<std::uint32_t>(sender + 1));
  return true;
}
__device__ __forceinline__ bool gaveUp(const OneShotArgs& a, unsigned long long start, int sender) {
  return waitGivesUp(a.error, a.timeoutNs, a.abortWord, start, sender);
}

// The operation counter grows by kEpochStride per operation: every block adds one when it is
// done and block 0 adds the rest of the stride. During an operation the counter therefore lies
// in [C, C + kEpochStride) whichever blocks have finished, and C / kEpochStride is the number
// of operations before it, exactly, for every block that reads it. No block waits for
// another: while block 0 waited for the others to count themselves before it published the
// next epoch, all-reduces of 64 and 128 KiB in lines (16 and 32 blocks) took 0.45 us longer
// in graphs on 2x H200 (176d235:bench/results/2026-11-22-h200x2-s8). Larger than any grid
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
// barrier timeout.
__device__ __forceinline__ bool awaitFlag(const OneShotArgs& a, const std::uint32_t* flag, std::uint32_t want,
                                          int sender) {
  const unsigned long long start = now();
  for (int spins = 0;; ++spins) {
    std::uint32_t seen;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(seen) : "l"(flag) : "memory");
    if (static_cast<int>(seen - want) >= 0) return true;
    // The bound and the abort word (host memory) are looked at every 64 polls only.
    if ((spins & 63) == 63 && gaveUp(a, start, sender)) return false;
  }
}

// This block's word for `sender` in rank `owner`'s flags ([block][sender]), and a release store
// into one: every write of the block before it (ordered by a barrier) is visible first.
__device__ __forceinline__ std::uint32_t* flagOf(const OneShotArgs& a, int owner, int sender) {
  return a.flags[owner] + blockIdx.x * kMaxCommRanks + sender;
}
__device__ __forceinline__ void raiseFlag(std::uint32_t* flag, std::uint32_t value) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(flag), "r"(value) : "memory");
}

// Block b of this rank meets block b of every peer: it raises `value` in their flags and waits
// for theirs. In the pull and chain kernels block b reads and writes only what block b of each
// rank is responsible for, so a per-block meeting covers exactly the memory in question.
// `fence`: this block stored into peers' memory, and those stores must land before a peer that
// sees the flag goes on.
__device__ __forceinline__ void meetPeers(const OneShotArgs& a, std::uint32_t value, bool fence, bool& failed) {
  __syncthreads();  // this block's loads and stores are done before it tells anyone
  const int t = threadIdx.x;
  if (t < a.ranks && t != a.rank) {
    if (fence) __threadfence_system();
    raiseFlag(flagOf(a, t, a.rank), value);
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
