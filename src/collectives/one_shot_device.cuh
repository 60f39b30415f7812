#pragma once
// Device-side pieces shared by the one-shot kernels (one_shot_kernels.cu: flags and scratch
// slots; one_shot_lines.cu: lines that carry their own flags) and the kernels built on them
// (relay, chain, pull). Internal to the library.

#include <algorithm>
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
//
// A kernel that carries `operations` operations (the regular one-shot variant's pieces, one
// epoch each) advances the counter by that many strides. Block 0 cannot add its share of
// them up front: a block of the same kernel that starts after block 0 ended would then read a
// later epoch. So every block adds one, and the block that finds the others' ones there adds
// the rest; until then the counter stays within the first stride. That add needs the old
// value back (a round trip), once per kernel of at least two slots of data.
__device__ __forceinline__ void endOperation(const OneShotArgs& a, std::uint32_t operations = 1) {
  __syncthreads();
  if (threadIdx.x != 0) return;
  if (operations == 1) {
    atomicAdd(a.opCounter, blockIdx.x == 0 ? kEpochStride - (gridDim.x - 1) : 1ull);
    return;
  }
  // The counter is a whole number of strides between operations (each adds whole strides).
  const unsigned long long before = atomicAdd(a.opCounter, 1ull);
  if ((before + 1) % kEpochStride == gridDim.x) atomicAdd(a.opCounter, operations * kEpochStride - gridDim.x);
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

// awaitFlag, unless a peer already failed this block (`failed`, the block's shared word, which
// other threads set while this one may be reading it); a wait that gives up marks it. So a dead
// peer costs a block one bound, not one per step.
__device__ __forceinline__ void awaitUnlessFailed(const OneShotArgs& a, const std::uint32_t* flag, std::uint32_t want,
                                                  int sender, bool& failed) {
  volatile bool& seen = failed;
  if (!seen && !awaitFlag(a, flag, want, sender)) seen = true;
}

// This block's word for `sender` in rank `owner`'s flags ([block][sender]).
__device__ __forceinline__ std::uint32_t* flagOf(const OneShotArgs& a, int owner, int sender) {
  return a.flags[owner] + blockIdx.x * kMaxCommRanks + sender;
}

// Block b of this rank meets block b of every peer: it raises `value` in their flags and waits
// for theirs. In the pull and chain kernels block b reads and writes only what block b of each
// rank is responsible for, so a per-block meeting covers exactly the memory in question.
// Whatever the block stored into peers' memory before the meeting has landed once a peer sees
// its flag (releaseStore).
__device__ __forceinline__ void meetPeers(const OneShotArgs& a, std::uint32_t value, bool& failed) {
  __syncthreads();  // this block's loads and stores are done before it tells anyone
  const int t = threadIdx.x;
  if (t < a.ranks && t != a.rank) {
    releaseStore(flagOf(a, t, a.rank), value);
    awaitUnlessFailed(a, flagOf(a, a.rank, t), value, t, failed);
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

// The relay's part of non-root rank r (relay_kernels.cu, relay_lines128.cu): parts follow the
// root in rank order.
__device__ __forceinline__ int relayPartOf(const OneShotArgs& a, int r) { return (r - a.root - 1 + a.ranks) % a.ranks; }

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

// The elements per chunk of each piece of a regular-variant kernel, the last one fewer
// (OneShotArgs::pieceLen, set only below len): the grid and the blocks' shares are made for
// this many.
__host__ __device__ __forceinline__ std::size_t pieceElements(const OneShotArgs& a) {
  return a.pieceLen ? a.pieceLen : a.len;
}

// How the regular variant cuts a piece of `len` elements per chunk: each block owns the same
// 16-byte units [b16, e16) of every chunk on every rank, so that its flags cover exactly the
// data it reads, in steps of stepUnits; one block also takes the elements from `tail` (after
// the last whole unit). Ranks whose buffers differ in alignment move vectors or single
// elements, and cut alike in units all the same.
//
// The blocks' shares are those of a piece of `cutLen` elements, clipped to `len`: the pieces of
// one kernel, the last one shorter, then give each block the same place in every piece's slot,
// and the tail falls where the block that takes it owns the slot. A block reuses a slot only
// after its own counterparts on the peers read it (the one-shot kernel's pieces); shares cut
// anew for a shorter piece overwrote units another block of the receiver had yet to read.
struct RegularCut {
  std::size_t b16 = 0, e16 = 0, stepUnits = 1, tail = 0;
  std::uint32_t steps = 1;
  bool takesTail = false;
  __device__ std::size_t stepBegin(std::uint32_t s) const { return b16 + s * stepUnits; }
  __device__ std::size_t stepEnd(std::uint32_t s) const { return min(e16, stepBegin(s) + stepUnits); }
};

template <class T>
__device__ __forceinline__ RegularCut cutRegular(const OneShotArgs& a, std::size_t len, std::size_t cutLen) {
  constexpr std::size_t kUnitElements = 16 / sizeof(T);
  const std::size_t units = len / kUnitElements;
  const std::size_t per = (cutLen / kUnitElements + gridDim.x - 1) / gridDim.x;
  RegularCut c;
  c.b16 = min(units, blockIdx.x * per);
  c.e16 = min(units, c.b16 + per);
  const std::size_t lastBlock = gridDim.x - 1;
  c.takesTail = blockIdx.x == (per ? min(units / per, lastBlock) : lastBlock);
  c.tail = units * kUnitElements;
  // Steps stay below kFlagStride, the flags' room per operation.
  c.stepUnits = std::max<std::size_t>({a.stepBytes / 16, 1, (per + kFlagStride - 1) / kFlagStride});
  c.steps = static_cast<std::uint32_t>(std::max<std::size_t>((c.e16 - c.b16 + c.stepUnits - 1) / c.stepUnits, 1));
  return c;
}

}  // namespace oneshot

/// The low-latency kernel's launch (one_shot_lines.cu); launchOneShot calls it when a.lines.
cudaError_t launchOneShotLines(const OneShotArgs& a, DataType type, cudaStream_t stream);

/// The 128-byte variant's launch (one_shot_lines128.cu); launchOneShot calls it when
/// a.lines128.
cudaError_t launchOneShotLines128(const OneShotArgs& a, DataType type, cudaStream_t stream);

/// The relay's 128-byte variant (relay_lines128.cu); launchRelay calls it when a.lines128.
cudaError_t launchRelayLines128(const OneShotArgs& a, DataType type, cudaStream_t stream);

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
cudaError_t loadRelayLines128Kernels();

/// Launches `kernel(a)` with a.earlyLaunch's programmatic dependent launch.
cudaError_t launchOneShotKernel(void (*kernel)(OneShotArgs), const OneShotArgs& a, int blocks, cudaStream_t stream,
                                int threads = oneshot::kThreads);

namespace oneshot {

// Launches a regular-variant kernel (one-shot or relay) for elements of T: a block per 4 KiB of
// a chunk's piece (medium messages finish sooner spread wide), up to one per SM of a 132-SM GPU unless
// a.maxBlocks says otherwise; `vectors` (16-byte units) where every chunk of input, output and
// the slots lies on a 16-byte boundary, else `elements`; `defaultStep` where a.stepBytes is 0.
template <class T>
cudaError_t launchRegular(void (*vectors)(OneShotArgs), void (*elements)(OneShotArgs), const OneShotArgs& a,
                          std::size_t defaultStep, cudaStream_t stream) {
  const int most = a.maxBlocks > 0 ? std::min(a.maxBlocks, kMaxOneShotBlocks) : 132;
  const int blocks = static_cast<int>(std::clamp<std::size_t>(pieceElements(a) * sizeof(T) / 4096, 1, most));
  OneShotArgs args = a;
  if (args.stepBytes == 0) args.stepBytes = defaultStep;
  auto aligned16 = [](const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0; };
  const bool units = aligned16(a.in) && aligned16(a.out) && (a.inStride * sizeof(T)) % 16 == 0 &&
                     (a.outStride * sizeof(T)) % 16 == 0 && a.slotBytes % 16 == 0;
  return launchOneShotKernel(units ? vectors : elements, args, blocks, stream);
}

}  // namespace oneshot

}  // namespace gpupeer
