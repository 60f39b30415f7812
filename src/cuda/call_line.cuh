#pragma once
// Call lines: where ranks are issued by separate processes (RankCommunicator), every one-shot
// kernel tells each peer which call it belongs to and checks that the peer's is the same, so
// that different counts, types, operators or roots are reported (kMismatchError) instead of
// exchanging data shaped for another call. Every variant does it the same way, so a mismatch
// that makes the ranks take different variants (a count above the 16-byte lines' limit on one
// rank only) is caught as well. Internal to the library.
//
// Block 0's thread t stores this kernel's call words into peer t's flags memory as one 16-byte
// line {word0, epoch, word1, epoch} (line_device.cuh: each 8-byte half lands whole, so a half
// that shows the epoch holds its word), into the slot of this sender and the epoch's parity.
// The thread of block 0 that receives from peer t later polls its own slot for t until it
// carries this epoch and compares. A sender reuses a parity's slot two operations later, after
// it has seen this rank's call line of the operation in between, which this rank stores only
// after its kernel that reads the slot ended: so no line is overwritten before it is read.

#include <cstdint>

#include "cuda/line_device.cuh"

namespace gpupeer {
namespace oneshot {

// Sender `sender`'s call line in rank `owner`'s flags (after the [block][sender] words).
__device__ __forceinline__ uint4* callLine(const OneShotArgs& a, int owner, std::uint32_t parity, int sender) {
  return reinterpret_cast<uint4*>(a.flags[owner] + kOneShotFlagWords) + parity * kMaxCommRanks + sender;
}

// Start of a kernel, every thread: block 0's thread t shows peer t this kernel's call. First,
// so that a peer that waits for it waits for no more than the link.
__device__ __forceinline__ void announceCall(const OneShotArgs& a, std::uint32_t epoch) {
  const int t = threadIdx.x;
  if (a.call[0] == 0 || blockIdx.x != 0 || t >= a.ranks || t == a.rank) return;
  storeLine(callLine(a, t, epoch & 1, a.rank), make_uint2(a.call[0], a.call[1]), epoch);
}

// Block 0's thread that receives from `peer` (before it waits for peer's data, which a peer
// with another call may never send): waits for peer's call line and compares. A different
// call is recorded as kMismatchError | peer with both calls beside the error word (the first
// error wins, as in waitGivesUp); every wait of this rank then gives up at once. A peer that
// never shows its line is recorded as any missing peer is (awaitLine).
__device__ __forceinline__ void checkCall(const OneShotArgs& a, std::uint32_t epoch, int peer) {
  if (a.call[0] == 0 || blockIdx.x != 0) return;
  const uint2 theirs = awaitLine(a, callLine(a, a.rank, epoch & 1, peer), epoch, peer);
  if (theirs.x == 0 || (theirs.x == a.call[0] && theirs.y == a.call[1])) return;  // 0: gave up
  if (atomicCAS(a.error, 0u, kMismatchError | static_cast<std::uint32_t>(peer)) != 0) return;
  a.error[2] = theirs.x;
  a.error[3] = theirs.y;
  a.error[4] = a.call[0];
  a.error[5] = a.call[1];
}

}  // namespace oneshot
}  // namespace gpupeer
