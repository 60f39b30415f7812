// The relay in 128-byte lines: the relay kernel's parts and routes (relay_kernels.cu), carried
// in the one-shot kernel's 128-byte lines (one_shot_lines128.cu) instead of steps behind flags.
// A line vouches for its own data, so a rank passes each line on, or reduces it, as soon as it
// lands: no step waits for a fence and a flag, which is what the regular relay pays at every
// 16 KiB step and why it trailed NCCL from 2 to 64 MiB on 4 processes. A piece is what one
// 128-byte slot holds (across processes line128SlotBytesAcrossProcessesFor's 8 MiB from 3
// ranks), and the host runs it at lag 0 (runRelay).
//
// Broadcast: the root stores each rank's part into that rank's slot for the root; the rank
// writes each line of it to its output and stores it, flag and all, into every other non-root
// rank's slot for itself. Reduce is its mirror: every non-root rank stores each other non-root
// rank's part of its input into that rank's slot for it; the rank reduces each line over the
// non-root ranks' (its own from its input) and stores the partial into the root's slot for
// itself; the root combines each partial with its own input into its output. The root's port
// then carries the message once, inward, as a broadcast's carries it once outward, and every
// other rank takes n - 2 parts, not n - 1 as where the root stores its parts too (the regular
// relay's route; docs/collectives.md, the relay row, has both measured).
#include "collectives/line128_device.cuh"
#include "collectives/reduce_math.cuh"

namespace gpupeer {
namespace {

using namespace oneshot;

// The line warps' work, in the rounds of walkLineRounds as the one-shot kernel's 128-byte
// variant's. Sending is what a rank stores into peers before it needs anything from them but
// the root's lines (a broadcast's non-root passes on its part); finishing is what needs the
// other ranks' lines of the round. No branch depends on the lane but for whole lines.
template <class T>
__device__ __forceinline__ void relayLines(const OneShotArgs& a, std::uint32_t epoch, std::uint32_t parity, int warp) {
  const int me = a.rank, n = a.ranks, root = a.root;
  const bool broadcast = a.op == CollOp::kBroadcast;
  const std::size_t words = a.len * sizeof(T) / sizeof(Word);  // whole words: oneShotAllowsLines128
  const std::size_t lineCount = lineCountFor(words);
  auto awaitFrom = [&](int sender, const LinePlace& p, Word& x, Word& y) {
    awaitLines(a, lines128(a, me, parity, sender), p, epoch, sender, x, y);
  };
  auto send = [&](std::size_t w) {
    if (!broadcast && me == root) return;  // a reduce's root only receives
    const LinePlace p = placeOf(w, lineCount);
    Word x = 0, y = 0;
    if (broadcast && me != root) {
      // This rank's part, from the root: into the output and on to the other non-root ranks.
      awaitFrom(root, p, x, y);
      storeData(outWords<T>(a, relayPartOf(a, me)), p, words, x, y);
    }
    for (int k = 1; k < n; ++k) {
      const int d = (me + k) % n;  // staggered, as the one-shot kernel's pushes
      if (d == root) continue;
      if (!broadcast || me == root) {  // else the root's line, passed on
        loadData(inWords<T>(a, relayPartOf(a, d)), p, words, x, y);
        if (p.flagSlot) y = epoch;
      }
      if (p.valid) storeWords(wordsAt(lines128(a, d, parity, me), p), x, y);
    }
  };
  auto finish = [&](std::size_t w) {
    const LinePlace p = placeOf(w, lineCount);
    Word x, y;
    if (broadcast) {
      // The root: every part from the input, unless in place; another rank: every other rank's
      // part from that rank.
      for (int r = 0; r < n; ++r) {
        if (r == root || r == me) continue;
        const int q = relayPartOf(a, r);
        if (me == root) {
          if (inWords<T>(a, q) == outWords<T>(a, q)) continue;
          loadData(inWords<T>(a, q), p, words, x, y);
        } else {
          awaitFrom(r, p, x, y);
        }
        storeData(outWords<T>(a, q), p, words, x, y);
      }
      return;
    }
    // Reduce. A non-root rank: its part of every non-root rank's input, in rank order, reduced
    // into a partial for the root (avg sums, as the chain's partials; the root divides). The
    // root: every part, its rank's partial combined with the root's input. One reduceUnits for
    // both: a second instance spilled the 16-bit and fp8 kernels' registers.
    const bool atRoot = me == root;
    const int sources = atRoot ? 2 : n - 1;
    const RedOp op = !atRoot && a.redop == RedOp::kAvg ? RedOp::kSum : a.redop;
    for (int r = 0; r < n; ++r) {
      if (r == root || (!atRoot && r != me)) continue;
      const int q = relayPartOf(a, r);             // the part finished: each of the others', or this rank's
      uint2 v0[kMaxCommRanks], v1[kMaxCommRanks];  // registers: unrolled constant indices
#pragma unroll
      for (int i = 0; i < kMaxCommRanks; ++i)
        if (i < sources) {
          // Source i: the root's are the partial and its input, a non-root rank's the i-th
          // non-root rank's part (its own from its input).
          const int from = atRoot ? (i == 0 ? r : me) : (i < root ? i : i + 1);
          if (from == me)
            loadData(inWords<T>(a, q), p, words, x, y);
          else
            awaitFrom(from, p, x, y);
          v0[i] = asUnit(x);
          v1[i] = asUnit(y);
        }
      x = asWord(reduceUnits<T, uint2>(op, v0, sources, n));
      y = p.flagSlot ? epoch : asWord(reduceUnits<T, uint2>(op, v1, sources, n));  // the flag's place
      if (atRoot) {
        storeData(outWords<T>(a, q), p, words, x, y);
      } else if (p.valid) {
        storeWords(wordsAt(lines128(a, root, parity, me), p), x, y);
      }
    }
  };
  walkLineRounds(a, warp, lineCount, send, finish);
}

template <class T>
__global__ void __launch_bounds__(kLine128Threads, 1) relayLines128(OneShotArgs a) {
  const std::uint32_t epoch = beginOperation(a);
  const std::uint32_t parity = epoch & 1;  // reuse argument as in oneShotLines
  const int warp = threadIdx.x / 32;
  if (warp == kLineWarps) {
    // A broadcast's lines go to every non-root rank, so its root hears from no one and every
    // other rank sends it a token; a reduce's go to every rank from every non-root rank, so its
    // root sends each rank a token.
    const bool reduce = a.op == CollOp::kReduce;
    const int me = a.rank, root = a.root;
    meetPeersByTokens(
        a, epoch, parity, [&](int t) { return reduce ? me != root : t != root; },
        [&](int t) { return reduce ? t != root : me != root; });
  } else {
    relayLines<T>(a, epoch, parity, warp);
  }
  endOperation(a);
}

struct LaunchRelayLines128 {
  const OneShotArgs& a;
  cudaStream_t stream;
  template <class T>
  cudaError_t operator()() const {
    return launchOneShotKernel(relayLines128<T>, a, line128GridFor(a, a.len * sizeof(T)), stream, kLine128Threads);
  }
};

struct LoadRelayLines128 {
  template <class T>
  cudaError_t operator()() const {
    return loadKernels(relayLines128<T>);
  }
};

}  // namespace

cudaError_t loadRelayLines128Kernels() { return forEveryType(LoadRelayLines128{}); }

cudaError_t launchRelayLines128(const OneShotArgs& a, DataType type, cudaStream_t stream) {
  return dispatchType(type, LaunchRelayLines128{a, stream});
}

}  // namespace gpupeer
