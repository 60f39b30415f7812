#pragma once
// Call lines: where ranks are issued by separate processes (RankCommunicator), every one-shot
// kernel tells each peer which call it belongs to and checks that the peer's is the same, so
// that different counts, types, operators or roots are reported (kMismatchError) instead of
// exchanging data shaped for another call. Every variant does it the same way, so a mismatch
// that makes the ranks take different variants (a count above the 16-byte lines' limit on one
// rank only) is caught as well. Internal to the library.
//
// Block 0's thread t stores this kernel's call words into peer t's flags memory as a 16-byte
// line {word0, epoch, word1, epoch} (line_device.cuh: each 8-byte half lands whole, so a half
// that shows the epoch holds its word), into the slot of this sender and the epoch's parity.
// The thread of block 0 that receives from peer t later polls its own slot for t until it
// carries this epoch and compares. With registered buffers (the pull kernel across
// processes) two more lines carry the sender's send and receive buffers as references into
// the registration table, and every block reads them. A sender reuses a parity's slot two operations later, after
// it has seen this rank's call line of the operation in between, which this rank stores only
// after its kernel that reads the slot ended: so no line is overwritten before it is read. A
// regular one-shot kernel of several pieces takes an epoch per piece but shows its call once:
// the next kernel's line may fall on the same parity. The sender starts that kernel only after
// it received this rank's pieces after the first, which this rank's block 0 sends only after
// its finishers, the thread that reads the line among them, are done with the first.

#include <cstdint>

#include "collectives/line_device.cuh"

namespace gpupeer {
namespace oneshot {

// Line `line` of sender `sender`'s call lines in rank `owner`'s flags (after the
// [block][sender] words): 0 the call, 1 and 2 the send and receive references.
__device__ __forceinline__ uint4* callLine(const OneShotArgs& a, int owner, std::uint32_t parity, int sender,
                                           int line = 0) {
  return reinterpret_cast<uint4*>(a.flags[owner] + kOneShotFlagWords) + (parity * kMaxCommRanks + sender) * kCallLines +
         line;
}

// Start of a kernel, every thread: block 0's thread t (or the thread that passes t) shows peer
// t this kernel's call (and with registered buffers its references). First, so that a peer
// that waits for it waits for no more than the link.
__device__ __forceinline__ void announceCall(const OneShotArgs& a, std::uint32_t epoch, int t = threadIdx.x) {
  if (a.call[0] == 0 || blockIdx.x != 0 || t >= a.ranks || t == a.rank) return;
  const std::uint32_t parity = epoch & 1;
  if (a.registered) {
    storeLine(callLine(a, t, parity, a.rank, 1), make_uint2(a.sendRef[0], a.sendRef[1]), epoch);
    storeLine(callLine(a, t, parity, a.rank, 2), make_uint2(a.recvRef[0], a.recvRef[1]), epoch);
  }
  storeLine(callLine(a, t, parity, a.rank), make_uint2(a.call[0], a.call[1]), epoch);
}

// Waits for `peer`'s call line and compares it with this kernel's call. A different call is
// recorded as kMismatchError | peer with both calls beside the error word (the first error
// wins, as in waitGivesUp); every wait of this rank then gives up at once. A peer that never
// shows its line is recorded as any missing peer is (awaitLine). True where the calls match.
__device__ __forceinline__ bool sameCall(const OneShotArgs& a, std::uint32_t epoch, int peer) {
  const uint2 theirs = awaitLine(a, callLine(a, a.rank, epoch & 1, peer), epoch, peer);
  if (theirs.x == 0) return false;  // gave up (no call is all zero)
  if (theirs.x == a.call[0] && theirs.y == a.call[1]) return true;
  recordError(a.error, kMismatchError | static_cast<std::uint32_t>(peer), theirs.x, theirs.y, a.call[0], a.call[1]);
  return false;
}

// The one-shot variants: block 0's thread that receives from `peer` checks its call before it
// waits for peer's data, which a peer with another call may never send.
__device__ __forceinline__ void checkCall(const OneShotArgs& a, std::uint32_t epoch, int peer) {
  if (a.call[0] != 0 && blockIdx.x == 0) sameCall(a, epoch, peer);
}

// Where reference `ref` of rank `rank` points in this process, if that registration exists
// here and holds `need` bytes from there; else null, recorded as kUnregisteredError | rank.
__device__ __forceinline__ char* registeredAt(const OneShotArgs& a, uint2 ref, int rank, std::uint64_t need) {
  const std::uint32_t index = ref.x & 0xfff;
  const std::uint64_t offset = static_cast<std::uint64_t>(ref.x >> 12) << 32 | ref.y;
  if (index >= 1 && index <= kMaxRegistrations) {
    const RegisteredBuffer& b = a.registered[(index - 1) * kMaxCommRanks + rank];
    if (b.base && offset + need <= b.bytes) return b.base + offset;
  }
  atomicCAS(a.error, 0u, kUnregisteredError | static_cast<std::uint32_t>(rank));
  return nullptr;
}

// With registered buffers, thread t (< ranks) of every block: rank t's send and receive
// buffers in this process, from its call line (after checking its call) or for this rank from
// its own references; null (recorded) where they cannot be reached.
__device__ __forceinline__ void registeredBuffersOf(const OneShotArgs& a, std::uint32_t epoch, int t, char*& send,
                                                    char*& recv) {
  send = recv = nullptr;
  uint2 sendRef = make_uint2(a.sendRef[0], a.sendRef[1]), recvRef = make_uint2(a.recvRef[0], a.recvRef[1]);
  if (t != a.rank) {
    if (!sameCall(a, epoch, t)) return;
    sendRef = awaitLine(a, callLine(a, a.rank, epoch & 1, t, 1), epoch, t);
    recvRef = awaitLine(a, callLine(a, a.rank, epoch & 1, t, 2), epoch, t);
  }
  // A broadcast's other ranks read no input and a reduce's write no output (NCCL ignores those
  // buffers): they need not be registered, and their references are not resolved.
  if (!(a.op == CollOp::kBroadcast && t != a.root)) send = registeredAt(a, sendRef, t, a.sendBytes);
  if (!(a.op == CollOp::kReduce && t != a.root)) recv = registeredAt(a, recvRef, t, a.recvBytes);
}

}  // namespace oneshot
}  // namespace gpupeer
