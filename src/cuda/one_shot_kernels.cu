#include <algorithm>
#include <type_traits>

#include "cuda/one_shot_kernels.cuh"
#include "cuda/reduce_math.cuh"

namespace gpupeer {
namespace {

constexpr int kThreads = 512;
// A peer that has not arrived after this long is reported instead of waited for forever.
constexpr unsigned long long kBarrierTimeoutNs = 10'000'000'000ULL;

__device__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Start of every one-shot kernel: wait for the previous kernel on the stream (launched with
// programmatic dependent launch, this kernel may be resident before that one ends: its launch
// latency hides behind the previous kernel), let the next one launch early in turn, and read
// this operation's epoch. Every thread reads the counter itself: no block-wide sync needed,
// and the counter changes only after every block has read it (endOperation).
__device__ __forceinline__ std::uint32_t beginOperation(const OneShotArgs& a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
  return *static_cast<volatile std::uint32_t*>(a.opCounter) + 1;
}

// The last block to finish publishes the epoch for the next operation.
__device__ __forceinline__ void endOperation(const OneShotArgs& a, std::uint32_t epoch) {
  __syncthreads();
  if (threadIdx.x != 0) return;
  if (gridDim.x == 1) {
    *a.opCounter = epoch;
    return;
  }
  __threadfence();
  if (atomicAdd(a.doneBlocks, 1u) == gridDim.x - 1) {
    *a.doneBlocks = 0;
    *a.opCounter = epoch;
  }
}

__device__ __forceinline__ bool sendsTo(const OneShotArgs& a, int dst) {
  switch (a.op) {
    case CollOp::kBroadcast: return a.rank == a.root;
    case CollOp::kReduce: return dst == a.root;
    case CollOp::kSendRecv: return dst == (a.rank + 1) % a.ranks;
    default: return true;
  }
}

// The input chunk that goes to `dst`: its own chunk for reduce-scatter and alltoall.
__device__ __forceinline__ int chunkFor(const OneShotArgs& a, int dst) {
  return a.op == CollOp::kReduceScatter || a.op == CollOp::kAllToAll ? dst : 0;
}

template <class T>
__device__ __forceinline__ T* slot(const OneShotArgs& a, int owner, std::uint32_t parity, int sender) {
  char* base = static_cast<char*>(a.scratch[owner]) + (parity * a.ranks + sender) * a.slotBytes;
  return reinterpret_cast<T*>(base);
}

template <class T, class U>
__device__ __forceinline__ const U* inChunk(const OneShotArgs& a, int q) {
  return reinterpret_cast<const U*>(static_cast<const T*>(a.in) + q * a.inStride);
}
template <class T, class U>
__device__ __forceinline__ U* outChunk(const OneShotArgs& a, int q) {
  return reinterpret_cast<U*>(static_cast<T*>(a.out) + q * a.outStride);
}

// Units [b, e) of every chunk this rank sends, into each receiver's slot for this rank.
template <class T, class U>
__device__ void push(const OneShotArgs& a, std::size_t b, std::size_t e, std::uint32_t parity) {
  for (int d = 0; d < a.ranks; ++d) {
    if (d == a.rank || !sendsTo(a, d)) continue;
    const U* src = inChunk<T, U>(a, chunkFor(a, d));
    U* dst = reinterpret_cast<U*>(slot<T>(a, d, parity, a.rank));
    for (std::size_t u = b + threadIdx.x; u < e; u += blockDim.x) dst[u] = src[u];
  }
}

// Units [b, e) of this rank's output, from its input and the slots filled by its peers.
template <class T, class U>
__device__ void finish(const OneShotArgs& a, std::size_t b, std::size_t e, std::uint32_t parity) {
  const int me = a.rank, n = a.ranks;
  auto peer = [&](int r) { return reinterpret_cast<const U*>(slot<T>(a, me, parity, r)); };
  switch (a.op) {
    case CollOp::kAllReduce:
    case CollOp::kReduceScatter:
    case CollOp::kReduce: {
      if (a.op == CollOp::kReduce && me != a.root) return;
      const U* own = inChunk<T, U>(a, a.op == CollOp::kReduceScatter ? me : 0);
      U* out = outChunk<T, U>(a, 0);
      for (std::size_t u = b + threadIdx.x; u < e; u += blockDim.x) {
        U v[kMaxCommRanks];
#pragma unroll
        for (int r = 0; r < kMaxCommRanks; ++r)
          if (r < n) v[r] = r == me ? own[u] : peer(r)[u];
        out[u] = reduceUnits<T, U>(a.redop, v, n);
      }
      return;
    }
    case CollOp::kAllGather:
    case CollOp::kAllToAll: {
      const U* own = inChunk<T, U>(a, a.op == CollOp::kAllToAll ? me : 0);
      for (int r = 0; r < n; ++r) {
        U* out = outChunk<T, U>(a, r);
        const U* src = r == me ? own : peer(r);
        if (src == out) continue;  // in place: already there
        for (std::size_t u = b + threadIdx.x; u < e; u += blockDim.x) out[u] = src[u];
      }
      return;
    }
    case CollOp::kBroadcast:
    case CollOp::kSendRecv: {
      int from = a.op == CollOp::kBroadcast ? a.root : (me + n - 1) % n;
      const U* src = from == me ? inChunk<T, U>(a, 0) : peer(from);
      U* out = outChunk<T, U>(a, 0);
      if (src == out) return;
      for (std::size_t u = b + threadIdx.x; u < e; u += blockDim.x) out[u] = src[u];
      return;
    }
  }
}

template <class T, bool kVectors>
__global__ void __launch_bounds__(kThreads) oneShot(OneShotArgs a) {
  using U = std::conditional_t<kVectors, uint4, T>;
  constexpr std::size_t kLanes = sizeof(U) / sizeof(T);
  const std::uint32_t epoch = beginOperation(a);
  // Scratch alternates between two parities. A rank starts operation k+2 (same parity as k)
  // only after passing k+1's barrier with every peer, and a peer reaches k+1's barrier only
  // after finishing k: so nobody still reads the slots being overwritten.
  const std::uint32_t parity = epoch & 1;
  // Each block owns the same units of every chunk on every rank, so its barrier covers exactly
  // the data it reads; the last block also takes the elements after the last whole unit.
  const std::size_t units = a.len / kLanes;
  const std::size_t per = (units + gridDim.x - 1) / gridDim.x;
  const std::size_t b = min(units, blockIdx.x * per), e = min(units, b + per);
  const bool last = blockIdx.x == gridDim.x - 1;
  const std::size_t tail = units * kLanes;

  push<T, U>(a, b, e, parity);
  if (last && kVectors) push<T, T>(a, tail, a.len, parity);
  __syncthreads();
  // Barrier of this block with the same block of every rank. The fence and release store make
  // the block's pushes (ordered before them by __syncthreads) visible before the flag; the
  // acquire load of a peer's flag makes that peer's pushes visible after the next __syncthreads.
  // (Sending in steps, each with its own flag so that the reduction of one overlaps the sending
  // of the next, measured slower on 2x H200: bench/README.md.)
  const int t = threadIdx.x;
  if (t < a.ranks && t != a.rank) {
    std::uint32_t* mark = a.flags[t] + blockIdx.x * kMaxCommRanks + a.rank;
    __threadfence_system();
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(mark), "r"(epoch) : "memory");
    const std::uint32_t* wait = a.flags[a.rank] + blockIdx.x * kMaxCommRanks + t;
    const unsigned long long start = now();
    for (;;) {
      std::uint32_t seen;
      asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(seen) : "l"(wait) : "memory");
      if (static_cast<int>(seen - epoch) >= 0) break;
      if (now() - start > kBarrierTimeoutNs) {
        atomicCAS(a.error, 0u, static_cast<std::uint32_t>(t + 1));
        break;
      }
    }
  }
  __syncthreads();
  finish<T, U>(a, b, e, parity);
  if (last && kVectors) finish<T, T>(a, tail, a.len, parity);
  endOperation(a, epoch);
}

// ---- Low-latency variant: 8 bytes of data per 16-byte line {d0, epoch, d1, epoch}. Each
// 8-byte half is written and read whole, so a half that shows the epoch holds its data.
__device__ __forceinline__ void storeLine(uint4* p, uint2 d, std::uint32_t epoch) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(d.x), "r"(epoch), "r"(d.y), "r"(epoch)
               : "memory");
}

// Polls a line until both halves carry `epoch`; gives up (recording `sender`) after the
// barrier timeout so a missing peer is reported, not waited for forever.
__device__ __forceinline__ uint2 awaitLine(const OneShotArgs& a, const uint4* p, std::uint32_t epoch, int sender) {
  unsigned long long start = 0;
  for (int spins = 0;; ++spins) {
    std::uint32_t x, fx, y, fy;
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(x), "=r"(fx), "=r"(y), "=r"(fy)
                 : "l"(p)
                 : "memory");
    if (fx == epoch && fy == epoch) return make_uint2(x, y);
    if (spins == 64) start = now();
    if (spins > 64 && (spins & 1023) == 0 && now() - start > kBarrierTimeoutNs) {
      atomicCAS(a.error, 0u, static_cast<std::uint32_t>(sender + 1));
      return make_uint2(0, 0);
    }
  }
}

__device__ __forceinline__ uint4* lines(const OneShotArgs& a, int owner, std::uint32_t parity, int sender) {
  char* base = static_cast<char*>(a.llScratch[owner]) + (parity * a.ranks + sender) * a.llSlotBytes;
  return reinterpret_cast<uint4*>(base);
}
__device__ __forceinline__ uint4* token(const OneShotArgs& a, int owner, std::uint32_t parity, int sender) {
  char* base = static_cast<char*>(a.llScratch[owner]) + 2 * a.ranks * a.llSlotBytes;
  return reinterpret_cast<uint4*>(base) + parity * a.ranks + sender;
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

// Unit u of a chunk, 8 bytes, or only `partial` elements (the last unit of a chunk whose size
// is not a multiple of 8 bytes: the rest of the unit is not the caller's memory).
template <class T>
__device__ __forceinline__ uint2 loadUnit(const uint2* base, std::size_t u, int partial) {
  if (!partial) return base[u];
  uint2 v = make_uint2(0, 0);
  const T* src = reinterpret_cast<const T*>(base + u);
  for (int i = 0; i < partial; ++i) Unit<T, uint2>::lane(v, i) = src[i];
  return v;
}
template <class T>
__device__ __forceinline__ void storeUnit(uint2* base, std::size_t u, uint2 v, int partial) {
  if (!partial) {
    base[u] = v;
    return;
  }
  T* dst = reinterpret_cast<T*>(base + u);
  for (int i = 0; i < partial; ++i) dst[i] = Unit<T, uint2>::lane(v, i);
}

// kPartial: the chunk ends in a partial unit. A separate instantiation, so that the common
// case (whole units) carries no per-unit test: with it, 8-byte all-reduces in a graph took
// 3.15-3.33 us instead of 2.88-2.94 (bench/results/2026-11-22-h200x2-coll3, -coll2).
template <class T, bool kPartial>
__global__ void __launch_bounds__(kThreads) oneShotLines(OneShotArgs a) {
  using U = uint2;  // 8 data bytes per line
  const std::uint32_t epoch = beginOperation(a);
  const std::uint32_t parity = epoch & 1;  // reuse argument as in oneShot; tokens keep it
  const int me = a.rank, n = a.ranks;
  // Whole 8-byte units, and a last partial one when the chunk is not a multiple of 8 bytes.
  const std::size_t bytes = a.len * sizeof(T);
  const std::size_t units = (bytes + sizeof(U) - 1) / sizeof(U);
  const int tailElements = static_cast<int>((bytes % sizeof(U)) / sizeof(T));
  auto partial = [&](std::size_t u) { return kPartial && u + 1 == units ? tailElements : 0; };
  const std::size_t per = (units + gridDim.x - 1) / gridDim.x;
  const std::size_t b = min(units, blockIdx.x * per), e = min(units, b + per);
  // Send: data lines to every receiver of this rank's data, a token line to the others (so
  // every rank hears from every peer in every operation: the parity reuse argument).
  for (int d = 0; d < n; ++d) {
    if (d == me) continue;
    if (dataFlows(a, me, d)) {
      const U* src = inChunk<T, U>(a, chunkFor(a, d));
      uint4* dst = lines(a, d, parity, me);
      for (std::size_t u = b + threadIdx.x; u < e; u += blockDim.x)
        storeLine(dst + u, loadUnit<T>(src, u, partial(u)), epoch);
    } else if (blockIdx.x == 0 && threadIdx.x == 0) {
      storeLine(token(a, d, parity, me), make_uint2(0, 0), epoch);
    }
  }
  if (blockIdx.x == 0 && threadIdx.x < n && threadIdx.x != me && !dataFlows(a, threadIdx.x, me))
    awaitLine(a, token(a, me, parity, threadIdx.x), epoch, threadIdx.x);
  // Receive and finish, polling this GPU's own memory.
  auto peer = [&](int r, std::size_t u) { return awaitLine(a, lines(a, me, parity, r) + u, epoch, r); };
  switch (a.op) {
    case CollOp::kAllReduce:
    case CollOp::kReduceScatter:
    case CollOp::kReduce: {
      if (a.op == CollOp::kReduce && me != a.root) break;
      const U* own = inChunk<T, U>(a, a.op == CollOp::kReduceScatter ? me : 0);
      U* out = outChunk<T, U>(a, 0);
      for (std::size_t u = b + threadIdx.x; u < e; u += blockDim.x) {
        U v[kMaxCommRanks];
#pragma unroll
        for (int r = 0; r < kMaxCommRanks; ++r)
          if (r < n) v[r] = r == me ? loadUnit<T>(own, u, partial(u)) : peer(r, u);
        storeUnit<T>(out, u, reduceUnits<T, U>(a.redop, v, n), partial(u));
      }
      break;
    }
    case CollOp::kAllGather:
    case CollOp::kAllToAll: {
      const U* own = inChunk<T, U>(a, a.op == CollOp::kAllToAll ? me : 0);
      for (int r = 0; r < n; ++r) {
        U* out = outChunk<T, U>(a, r);
        if (r == me && own == out) continue;
        for (std::size_t u = b + threadIdx.x; u < e; u += blockDim.x)
          storeUnit<T>(out, u, r == me ? loadUnit<T>(own, u, partial(u)) : peer(r, u), partial(u));
      }
      break;
    }
    case CollOp::kBroadcast:
    case CollOp::kSendRecv: {
      const int from = a.op == CollOp::kBroadcast ? a.root : (me + n - 1) % n;
      const U* own = inChunk<T, U>(a, 0);
      U* out = outChunk<T, U>(a, 0);
      if (from == me && own == out) break;
      for (std::size_t u = b + threadIdx.x; u < e; u += blockDim.x)
        storeUnit<T>(out, u, from == me ? loadUnit<T>(own, u, partial(u)) : peer(from, u), partial(u));
      break;
    }
  }
  endOperation(a, epoch);
}

bool aligned8(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 7) == 0; }

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0; }

struct LaunchOneShot {
  const OneShotArgs& a;
  cudaStream_t stream;
  template <class T>
  cudaError_t operator()() const {
    if (a.lines) {
      const std::size_t units = (a.len * sizeof(T) + 7) / 8;
      // A block per 1024 lines: small messages stay in one block, 64 KiB spreads over eight.
      const int blocks = static_cast<int>(std::clamp<std::size_t>((units + 1023) / 1024, 1, kMaxOneShotBlocks));
      return (a.len * sizeof(T)) % 8 ? launch(oneShotLines<T, true>, blocks) : launch(oneShotLines<T, false>, blocks);
    }
    // A block per 4 KiB of a chunk (medium messages finish sooner spread wide), up to one per SM
    // of a 132-SM GPU.
    const int blocks = static_cast<int>(std::clamp<std::size_t>(a.len * sizeof(T) / 4096, 1, 132));
    // 16-byte units need every chunk of input, output and the slots on a 16-byte boundary.
    bool vectors = aligned16(a.in) && aligned16(a.out) && (a.inStride * sizeof(T)) % 16 == 0 &&
                   (a.outStride * sizeof(T)) % 16 == 0 && a.slotBytes % 16 == 0;
    return vectors ? launch(oneShot<T, true>, blocks) : launch(oneShot<T, false>, blocks);
  }
  cudaError_t launch(void (*kernel)(OneShotArgs), int blocks) const {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(kThreads);
    config.stream = stream;
    cudaLaunchAttribute early{};
    early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    early.val.programmaticStreamSerializationAllowed = 1;
    config.attrs = &early;
    config.numAttrs = a.earlyLaunch ? 1 : 0;
    return cudaLaunchKernelEx(&config, kernel, a);
  }
};

template <class T, bool kVectors>
__global__ void __launch_bounds__(kThreads) localReduceKernel(ReduceSources s, void* out, std::size_t count, RedOp op) {
  using U = std::conditional_t<kVectors, uint4, T>;
  constexpr std::size_t kLanes = sizeof(U) / sizeof(T);
  const std::size_t units = count / kLanes;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::size_t u = first; u < units; u += stride) {
    U v[kMaxCommRanks];
#pragma unroll
    for (int r = 0; r < kMaxCommRanks; ++r)
      if (r < s.n) v[r] = static_cast<const U*>(s.src[r])[u];
    static_cast<U*>(out)[u] = reduceUnits<T, U>(op, v, s.n);
  }
  if (kVectors)
    for (std::size_t i = units * kLanes + first; i < count; i += stride) {
      T v[kMaxCommRanks];
#pragma unroll
      for (int r = 0; r < kMaxCommRanks; ++r)
        if (r < s.n) v[r] = static_cast<const T*>(s.src[r])[i];
      static_cast<T*>(out)[i] = reduceUnits<T, T>(op, v, s.n);
    }
}

struct LaunchLocalReduce {
  const ReduceSources& s;
  void* out;
  std::size_t count;
  RedOp op;
  cudaStream_t stream;
  template <class T>
  cudaError_t operator()() const {
    bool vectors = aligned16(out);
    for (int r = 0; r < s.n; ++r) vectors = vectors && aligned16(s.src[r]);
    std::size_t units = vectors ? count / (16 / sizeof(T)) : count;
    // Enough blocks to keep every SM busy streaming (4 per SM on a 132-SM GPU), fewer when
    // there is little to do.
    int blocks = static_cast<int>(std::clamp<std::size_t>((units + kThreads - 1) / kThreads, 1, 528));
    if (vectors)
      localReduceKernel<T, true><<<blocks, kThreads, 0, stream>>>(s, out, count, op);
    else
      localReduceKernel<T, false><<<blocks, kThreads, 0, stream>>>(s, out, count, op);
    return cudaGetLastError();
  }
};

}  // namespace

std::size_t oneShotLineScratchBytes(int ranks, std::size_t slotBytes) {
  return 2 * ranks * slotBytes + 2 * ranks * sizeof(uint4);
}

bool oneShotAllowsLines(const OneShotArgs& a, DataType type) {
  // Whole units are 8-byte accesses: every chunk must start on an 8-byte boundary, unless a
  // chunk is less than one unit (then every access is one element).
  const std::size_t es = dataTypeSize(type), bytes = a.len * es, lines = (bytes + 7) / 8;
  const bool aligned = aligned8(a.in) && aligned8(a.out) && (a.inStride * es) % 8 == 0 && (a.outStride * es) % 8 == 0;
  return a.llScratch[a.rank] && (aligned || bytes < 8) && lines * 16 <= a.llSlotBytes;
}

cudaError_t launchOneShot(const OneShotArgs& a, DataType type, cudaStream_t stream) {
  if (a.len == 0) return cudaSuccess;
  if (a.ranks < 2 || a.ranks > kMaxCommRanks) return cudaErrorInvalidValue;
  return dispatchType(type, LaunchOneShot{a, stream});
}

cudaError_t launchLocalReduce(const ReduceSources& sources, void* out, std::size_t count, DataType type, RedOp op,
                              cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  if (sources.n < 1 || sources.n > kMaxCommRanks) return cudaErrorInvalidValue;
  return dispatchType(type, LaunchLocalReduce{sources, out, count, op, stream});
}

}  // namespace gpupeer
