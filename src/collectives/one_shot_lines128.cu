// The one-shot kernel's 128-byte variant (on 2 GPUs it takes every piece of whole 8-byte
// words: collectives/line128_rules.hpp): data travels in 128-byte lines of 120 data bytes and an 8-byte
// flag that holds the operation's epoch (NCCL's LL128 idea). Eight consecutive threads of a warp
// store one aligned line with one 16-byte store each, in the same instruction, and NVLink
// delivers such a line whole (the property NCCL's LL128 relies on; CUDA does not document it),
// so a receiver that reads the flag with the line's other 120 bytes (again one instruction of
// eight threads) has the data the flag vouches for. A line costs 128 bytes for 120 of data, where
// the 16-byte lines cost 16 for 8, and, as there, no fence or separate flag crosses the link.
// One instruction needs a converged warp: the warps that move lines never branch by lane, and
// the per-peer work (call lines, tokens: one thread per peer, which waits alone) is done by an
// extra warp of each block that moves no line. With that work in the first line warp, a lane
// that waited for a peer's call line left the warp diverged, stored its 16 bytes of a line
// later than the line's flag, and a peer took the line with 16 stale bytes (4 floats of another
// piece in a sum; 2x H200, one process per GPU: 12-24 wrong elements per 32 MiB all-reduce).
#include "collectives/line128_device.cuh"
#include "collectives/reduce_math.cuh"

namespace gpupeer {
namespace {

using namespace oneshot;

// The line warps' work (warp `warp` of kLineWarps in this block), in walkLineRounds' rounds:
// every line this warp owns sent to every receiver and finished from every sender. No branch
// here depends on the lane but for whole lines (a line's eight lanes always go together), so
// that each line is stored and loaded by one instruction.
template <class T, int kRanks>
__device__ __forceinline__ void moveLines(const OneShotArgs& a, std::uint32_t epoch, std::uint32_t parity, int me,
                                          int n, int warp) {
  const std::size_t words = a.len * sizeof(T) / sizeof(Word);  // whole words: oneShotAllowsLines128
  const std::size_t lineCount = lineCountFor(words);
  auto from = [&](int r) { return lines128(a, me, parity, r); };
  auto send = [&](std::size_t w) {
    const LinePlace p = placeOf(w, lineCount);
    for (int k = 1; k < n; ++k) {
      const int d = (me + k) % n;  // staggered, as in oneShot's push
      if (!dataFlows(a, me, d)) continue;
      Word x, y;
      loadData(inWords<T>(a, chunkFor(a, d)), p, words, x, y);
      if (p.flagSlot) y = epoch;
      if (p.valid) storeWords(wordsAt(lines128(a, d, parity, me), p), x, y);
    }
  };
  // Rank r's two words of line p: this rank's own (from `own`), or the ones rank r sent.
  auto take = [&](int r, const Word* own, const LinePlace& p, Word& x, Word& y) {
    if (r == me)
      loadData(own, p, words, x, y);
    else
      awaitLines(a, from(r), p, epoch, r, x, y);
  };
  // Rank r's words of line p into `out`, unless they are there already (in place).
  auto copyFrom = [&](int r, const Word* own, Word* out, const LinePlace& p) {
    if (r == me && own == out) return;
    Word x, y;
    take(r, own, p, x, y);
    storeData(out, p, words, x, y);
  };
  auto finish = [&](std::size_t w) {
    const LinePlace p = placeOf(w, lineCount);
    switch (a.op) {
      case CollOp::kAllReduce:
      case CollOp::kReduceScatter:
      case CollOp::kReduce: {
        if (a.op == CollOp::kReduce && me != a.root) break;
        uint2 v0[kMaxCommRanks], v1[kMaxCommRanks];  // registers: unrolled constant indices
#pragma unroll
        for (int r = 0; r < kMaxCommRanks; ++r)
          if (r < n) {
            Word x, y;
            take(r, inWords<T>(a, a.op == CollOp::kReduceScatter ? me : 0), p, x, y);
            v0[r] = asUnit(x);
            v1[r] = asUnit(y);
          }
        storeData(outWords<T>(a, 0), p, words, asWord(reduceUnits<T, uint2>(a.redop, v0, n)),
                  asWord(reduceUnits<T, uint2>(a.redop, v1, n)));
        break;
      }
      case CollOp::kAllGather:
      case CollOp::kAllToAll: {
        const Word* own = inWords<T>(a, a.op == CollOp::kAllToAll ? me : 0);
        for (int r = 0; r < n; ++r) copyFrom(r, own, outWords<T>(a, r), p);
        break;
      }
      case CollOp::kBroadcast:
      case CollOp::kSendRecv: {
        copyFrom(a.op == CollOp::kBroadcast ? a.root : (me + n - 1) % n, inWords<T>(a, 0), outWords<T>(a, 0), p);
        break;
      }
    }
  };
  walkLineRounds(a, warp, lineCount, send, finish);
}

// kRanks: 2, where the rank count is known when compiling, or 0 for any. For 2 every array and
// loop over ranks shrinks to two: 36-40 registers instead of 96-128 and three blocks per SM,
// which measured faster at every size (docs/collectives.md, tuned constants).
template <class T, int kRanks>
__global__ void __launch_bounds__(kLine128Threads, kRanks == 2 ? 3 : 1) oneShotLines128(OneShotArgs a) {
  const std::uint32_t epoch = beginOperation(a);
  const std::uint32_t parity = epoch & 1;  // reuse argument as in oneShotLines
  const int me = a.rank, n = kRanks ? kRanks : a.ranks;
  const int warp = threadIdx.x / 32;
  if (warp == kLineWarps) {
    meetPeersByTokens(
        a, epoch, parity, [&](int t) { return dataFlows(a, me, t); }, [&](int t) { return dataFlows(a, t, me); });
  } else {
    moveLines<T, kRanks>(a, epoch, parity, me, n, warp);
  }
  endOperation(a);
}

struct LaunchLines128 {
  const OneShotArgs& a;
  cudaStream_t stream;
  template <class T>
  cudaError_t operator()() const {
    return launchOneShotKernel(a.ranks == 2 ? oneShotLines128<T, 2> : oneShotLines128<T, 0>, a,
                               line128GridFor(a, a.len * sizeof(T)), stream, kLine128Threads);
  }
};

struct LoadLines128 {
  template <class T>
  cudaError_t operator()() const {
    return loadKernels(oneShotLines128<T, 2>, oneShotLines128<T, 0>);
  }
};

}  // namespace

cudaError_t loadOneShotLines128Kernels() { return forEveryType(LoadLines128{}); }

cudaError_t launchOneShotLines128(const OneShotArgs& a, DataType type, cudaStream_t stream) {
  return dispatchType(type, LaunchLines128{a, stream});
}

}  // namespace gpupeer
