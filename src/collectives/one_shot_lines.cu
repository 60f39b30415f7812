// The one-shot kernel's low-latency variant, for pieces up to 1 MiB by default: data travels in
// 16-byte lines that carry the operation's epoch beside every 4 bytes (NCCL's LL idea), so a
// receiver polls its own memory for the data itself and no fence or separate flag crosses the
// link.
#include <algorithm>

#include "collectives/call_line.cuh"
#include "collectives/line_device.cuh"
#include "collectives/line_grid.hpp"
#include "collectives/one_shot_device.cuh"
#include "collectives/reduce_math.cuh"

namespace gpupeer {
namespace {

using namespace oneshot;

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
// case (whole units) carries no per-unit test, which slowed the smallest all-reduces
// (docs/collectives.md, tuned constants).
template <class T, bool kPartial>
__global__ void __launch_bounds__(kThreads) oneShotLines(OneShotArgs a) {
  using U = uint2;  // 8 data bytes per line
  const std::uint32_t epoch = beginOperation(a);
  announceCall(a, epoch);
  const std::uint32_t parity = epoch & 1;  // reuse argument as in oneShot; tokens keep it
  const int me = a.rank, n = a.ranks;
  // Whole 8-byte units, and a last partial one when the chunk is not a multiple of 8 bytes.
  const std::size_t bytes = a.len * sizeof(T);
  const std::size_t units = (bytes + sizeof(U) - 1) / sizeof(U);
  const int tailElements = static_cast<int>((bytes % sizeof(U)) / sizeof(T));
  auto partial = [&](std::size_t u) { return kPartial && u + 1 == units ? tailElements : 0; };
  const std::size_t per = lineShare(units, gridDim.x);  // whole warps' lines
  const std::size_t b = min(units, blockIdx.x * per), e = min(units, b + per);
  // A rank that reduces loads its own input for its first unit (with the grid's one line per
  // thread, its only one) before it sends anything, and keeps it: an all-reduce sends that
  // same unit, and after the wait for the peers' lines only the arithmetic is left.
  const bool reduces =
      a.op == CollOp::kAllReduce || a.op == CollOp::kReduceScatter || (a.op == CollOp::kReduce && me == a.root);
  const U* reducedIn = inChunk<T, U>(a, a.op == CollOp::kReduceScatter ? me : 0);
  const std::size_t first = b + threadIdx.x;
  U mine = make_uint2(0, 0);
  if (reduces && first < e) mine = loadUnit<T>(reducedIn, first, partial(first));
  auto ownUnit = [&](std::size_t u) { return u == first ? mine : loadUnit<T>(reducedIn, u, partial(u)); };
  // Send: data lines to every receiver of this rank's data, a token line to the others (so
  // every rank hears from every peer in every operation: the parity reuse argument).
  for (int k = 1; k < n; ++k) {
    const int d = (me + k) % n;  // staggered, as in oneShot's push
    if (dataFlows(a, me, d)) {
      const U* src = inChunk<T, U>(a, chunkFor(a, d));
      const bool sendsMine = reduces && src == reducedIn;
      uint4* dst = lines(a, d, parity, me);
      for (std::size_t u = b + threadIdx.x; u < e; u += blockDim.x)
        storeLine(dst + u, sendsMine ? ownUnit(u) : loadUnit<T>(src, u, partial(u)), epoch);
    } else if (blockIdx.x == 0 && threadIdx.x == 0) {
      storeLine(token(a, d, parity, me), make_uint2(0, 0), epoch);
    }
  }
  if (threadIdx.x < n && threadIdx.x != me) checkCall(a, epoch, threadIdx.x);
  if (blockIdx.x == 0 && threadIdx.x < n && threadIdx.x != me && !dataFlows(a, threadIdx.x, me))
    awaitLine(a, token(a, me, parity, threadIdx.x), epoch, threadIdx.x);
  // Receive and finish, polling this GPU's own memory.
  auto peer = [&](int r, std::size_t u) { return awaitLine(a, lines(a, me, parity, r) + u, epoch, r); };
  switch (a.op) {
    case CollOp::kAllReduce:
    case CollOp::kReduceScatter:
    case CollOp::kReduce: {
      if (!reduces) break;
      U* out = outChunk<T, U>(a, 0);
      for (std::size_t u = b + threadIdx.x; u < e; u += blockDim.x) {
        U v[kMaxCommRanks];  // registers: every index below is an unrolled constant
#pragma unroll
        for (int r = 0; r < kMaxCommRanks; ++r)
          if (r < n && r == me) v[r] = ownUnit(u);
#pragma unroll
        for (int r = 0; r < kMaxCommRanks; ++r)
          if (r < n && r != me) v[r] = peer(r, u);
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
  endOperation(a);
}

struct LaunchLines {
  const OneShotArgs& a;
  cudaStream_t stream;
  template <class T>
  cudaError_t operator()() const {
    const std::size_t units = (a.len * sizeof(T) + 7) / 8;
    // One line per thread: a thread with two waited for the first's reduction (its own
    // input's load, then the peer's line) before the second's. Blocks as small as that allows
    // (collectives/line_grid.hpp).
    const LineGrid grid = lineGridFor(units, a.lineBlockLines);
    return launchOneShotKernel((a.len * sizeof(T)) % 8 ? oneShotLines<T, true> : oneShotLines<T, false>, a, grid.blocks,
                               stream, grid.threads);
  }
};

struct LoadLines {
  template <class T>
  cudaError_t operator()() const {
    return loadKernels(oneShotLines<T, true>, oneShotLines<T, false>);
  }
};

}  // namespace

cudaError_t loadOneShotLinesKernels() { return forEveryType(LoadLines{}); }

cudaError_t launchOneShotLines(const OneShotArgs& a, DataType type, cudaStream_t stream) {
  return dispatchType(type, LaunchLines{a, stream});
}

}  // namespace gpupeer
