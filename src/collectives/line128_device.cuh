#pragma once
// Device pieces of the 128-byte lines (120 data bytes and an 8-byte flag holding the
// operation's epoch; one_shot_lines128.cu says why a line lands whole), shared by the one-shot
// kernel's 128-byte variant and the relay's (relay_lines128.cu). Internal to the library.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "collectives/call_line.cuh"
#include "collectives/one_shot_device.cuh"

namespace gpupeer {
namespace oneshot {

using Word = unsigned long long;

constexpr int kLineWords = kLine128Bytes / 8;  // 8-byte words per line
constexpr int kDataWords = kLine128Data / 8;   // of which data; the last is the flag
constexpr int kLineThreads = 8;                // threads per line, two words each
constexpr int kWarpLines = 32 / kLineThreads;
// Warps that move lines per block, and the block's threads: those and one warp for the work
// per peer (oneShotLines128).
constexpr int kLineWarps = kThreads / 32;
constexpr int kLine128Threads = kThreads + 32;

__device__ __forceinline__ void storeWords(Word* p, Word x, Word y) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(x), "l"(y) : "memory");
}
__device__ __forceinline__ void loadWords(const Word* p, Word& x, Word& y) {
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(x), "=l"(y) : "l"(p) : "memory");
}

__device__ __forceinline__ Word* lines128(const OneShotArgs& a, int owner, std::uint32_t parity, int sender) {
  char* base = static_cast<char*>(a.ll128Scratch[owner]) + (parity * a.ranks + sender) * a.ll128SlotBytes;
  return reinterpret_cast<Word*>(base);
}

// Where one thread's two words sit: line `line` of the piece (valid: it exists), slot `slot`
// of the line's eight; data words `first` and first + 1 of the chunk, the second of them the
// flag on slot 7.
struct LinePlace {
  bool valid;
  bool flagSlot;
  std::size_t line, first;
  int slot;
};

__device__ __forceinline__ LinePlace placeOf(std::size_t warpLine, std::size_t lineCount) {
  const int lane = threadIdx.x % 32;
  LinePlace p;
  p.line = warpLine + lane / kLineThreads;
  p.slot = lane % kLineThreads;
  p.valid = p.line < lineCount;
  p.flagSlot = p.slot == kLineThreads - 1;
  p.first = p.line * kDataWords + 2 * p.slot;
  return p;
}

// The thread's two words of its line in a slot of lines starting at `base`.
__device__ __forceinline__ Word* wordsAt(Word* base, const LinePlace& p) {
  return base + p.line * kLineWords + 2 * p.slot;
}
__device__ __forceinline__ const Word* wordsAt(const Word* base, const LinePlace& p) {
  return base + p.line * kLineWords + 2 * p.slot;
}

// The thread's two data words of a chunk (0 past its end or in the flag's place).
__device__ __forceinline__ void loadData(const Word* src, const LinePlace& p, std::size_t words, Word& x, Word& y) {
  x = p.valid && p.first < words ? src[p.first] : 0;
  y = p.valid && !p.flagSlot && p.first + 1 < words ? src[p.first + 1] : 0;
}
__device__ __forceinline__ void storeData(Word* dst, const LinePlace& p, std::size_t words, Word x, Word y) {
  if (p.valid && p.first < words) dst[p.first] = x;
  if (p.valid && !p.flagSlot && p.first + 1 < words) dst[p.first + 1] = y;
}

// Polls the warp's lines from one sender until every one carries `epoch` in its flag; the
// whole warp calls it together. Gives up (recording `sender`) after the barrier timeout, or at
// once where an earlier wait gave up (as waitGivesUp does).
__device__ __forceinline__ void awaitLines(const OneShotArgs& a, const Word* base, const LinePlace& p,
                                           std::uint32_t epoch, int sender, Word& x, Word& y) {
  const Word* at = wordsAt(base, p);
  unsigned long long start = 0;
  for (int spins = 0;; ++spins) {
    x = y = 0;
    if (p.valid) loadWords(at, x, y);
    if (__all_sync(0xffffffffu, !p.valid || !p.flagSlot || y == epoch)) return;
    if (spins == 64) start = globalTimerNs();
    if (spins > 64 && (spins & 1023) == 0 &&
        __any_sync(0xffffffffu, *static_cast<volatile std::uint32_t*>(a.error) != 0 ||
                                    abortRequested(a.abortWord, globalTimerNs() - start) ||
                                    globalTimerNs() - start > a.timeoutNs)) {
      if (threadIdx.x % 32 == 0) gaveUp(a, 0, sender);  // from 0: past the bound, records why
      x = y = 0;
      return;
    }
  }
}

template <class T>
__device__ __forceinline__ const Word* inWords(const OneShotArgs& a, int q) {
  return reinterpret_cast<const Word*>(static_cast<const T*>(a.in) + q * a.inStride);
}
template <class T>
__device__ __forceinline__ Word* outWords(const OneShotArgs& a, int q) {
  return reinterpret_cast<Word*>(static_cast<T*>(a.out) + q * a.outStride);
}

__device__ __forceinline__ uint2 asUnit(Word w) {
  return make_uint2(static_cast<unsigned>(w), static_cast<unsigned>(w >> 32));
}
__device__ __forceinline__ Word asWord(uint2 u) { return static_cast<Word>(u.x) | static_cast<Word>(u.y) << 32; }

// The lines that carry `words` 8-byte words.
__host__ __device__ __forceinline__ std::size_t lineCountFor(std::size_t words) {
  return (words + kDataWords - 1) / kDataWords;
}

// A line warp's rounds (warp `warp` of kLineWarps in its block): every warp takes kWarpLines
// lines at a time, the grid's warps in turn (a round). In its k-th round it calls send(round k's
// first line) and finish(round k - a.lines128Lag's): `lag` rounds of sending, then each round
// sent and the one `lag` rounds back finished, then the rounds left to finish. The lines the
// senders' same warp sent `lag` rounds before fly while this warp sends, where finishing only
// after the last send left every warp's last rounds of polls and loads exposed (line128LagFor;
// docs/collectives.md, tuned constants).
template <class Send, class Finish>
__device__ __forceinline__ void walkLineRounds(const OneShotArgs& a, int warp, std::size_t lineCount, Send&& send,
                                               Finish&& finish) {
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * kLineWarps;
  const std::size_t firstLine = (static_cast<std::size_t>(blockIdx.x) * kLineWarps + warp) * kWarpLines;
  const std::size_t stride = warps * kWarpLines;
  std::size_t sendAt = firstLine, finishAt = firstLine;
  for (int k = 0; k < a.lines128Lag && sendAt < lineCount; ++k, sendAt += stride) send(sendAt);
  for (; sendAt < lineCount; sendAt += stride, finishAt += stride) {
    send(sendAt);
    finish(finishAt);
  }
  for (; finishAt < lineCount; finishAt += stride) finish(finishAt);
}

// The grid of a 128-byte kernel for a piece of `bytes` per chunk (whole words): a block per
// kThreads / kLineThreads lines, at most a.maxBlocks where set, else a.lines128Blocks.
inline int line128GridFor(const OneShotArgs& a, std::size_t bytes) {
  const std::size_t lineCount = lineCountFor(bytes / sizeof(Word));
  const std::size_t linesPerBlock = kThreads / kLineThreads;
  const int most = a.maxBlocks > 0 ? a.maxBlocks : a.lines128Blocks;
  return static_cast<int>(
      std::clamp<std::size_t>((lineCount + linesPerBlock - 1) / linesPerBlock, 1, static_cast<std::size_t>(most)));
}

// The per-peer warp of a 128-byte kernel, block 0's: lane t shows peer t this call, tells it
// that this rank has begun where it sends it nothing (a token: the slots' reuse argument needs
// every rank to hear from every peer in every operation), checks peer t's call (a different
// call is reported at once; the line warps' waits then give up), and waits for its token where
// it receives nothing. `sendsTo(t)` / `hearsFrom(t)`: whether lines go to / come from peer t.
template <class SendsTo, class HearsFrom>
__device__ __forceinline__ void meetPeersByTokens(const OneShotArgs& a, std::uint32_t epoch, std::uint32_t parity,
                                                  SendsTo sendsTo, HearsFrom hearsFrom) {
  const int lane = threadIdx.x % 32, me = a.rank;
  if (blockIdx.x != 0 || lane >= a.ranks || lane == me) return;
  announceCall(a, epoch, lane);
  if (!sendsTo(lane)) storeLine(token(a, lane, parity, me), make_uint2(0, 0), epoch);
  checkCall(a, epoch, lane);
  if (!hearsFrom(lane)) awaitLine(a, token(a, me, parity, lane), epoch, lane);
}

}  // namespace oneshot
}  // namespace gpupeer
