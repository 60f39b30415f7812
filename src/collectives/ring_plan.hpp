#pragma once
// The ring's schedule, pure (ring_path.cpp enqueues it; tests/unit/ring_plan_test.cpp runs it
// on host memory under every ordering the streams allow). Every byte moves from rank r to
// r+1 (mod n) in legs: a leg is a piece of the message that starts at one rank and passes
// through the n-1 ranks after it, cut into chunks that follow each other around.
//
// * Copy legs (broadcast, all-gather): each rank forwards a chunk once it has landed in its own
//   output. A broadcast is one leg from the root; an all-gather one leg per rank.
// * Reduce legs (reduce, reduce-scatter): a chunk lands in the next rank's scratch, which adds
//   its own input to it in place and forwards the sum; the leg's last rank writes the total
//   into its output. A reduce is one leg ending at the root; a reduce-scatter one per rank.
// * All-reduce: reduce legs over n segments, then copy legs spreading each owner's total.

#include <cstddef>
#include <vector>

#include "gpupeer/collective_types.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

struct RingLeg {
  int first = 0;          ///< the rank it starts at; it ends at first + n - 1 (mod n)
  std::size_t from = 0;   ///< element offset of its data in the send buffers
  std::size_t to = 0;     ///< element offset in the receive buffers (copy legs: every rank's)
  std::size_t count = 0;  ///< elements
};

enum class RingLegKind { kCopy, kReduce };

/// One pass over the ring. `readsOutput`: the copy legs start from the receive buffers (the
/// all-reduce's second pass spreads what its first wrote there).
struct RingPhase {
  RingLegKind kind = RingLegKind::kCopy;
  std::vector<RingLeg> legs;
  bool readsOutput = false;
};

/// The passes of `op` (all but alltoall and send/recv) on n ranks for `count` elements
/// (collective_types.hpp's meaning of count), legs of no elements left out.
Result<std::vector<RingPhase>> ringPhases(CollOp op, int n, std::size_t count, int root);

enum class RingBuffer { kSend, kRecv, kScratch };
struct RingPlace {
  RingBuffer buffer = RingBuffer::kSend;
  int rank = 0;
  std::size_t byte = 0;
};

enum class RingAction {
  kWait,      ///< wait for signal `flag` from `peer`
  kPost,      ///< signal `flag` to `peer`
  kCopy,      ///< `elements` from src to dst (dst.rank may be another rank)
  kReduce,    ///< dst = src (a peer's partial result) op mine, over `elements`
  kHandOff,   ///< the rank's own stream marks local event `flag` (a reduction is written)
  kTakeOver,  ///< the rank's side stream waits for local event `flag`
};

/// One step, executed by `rank` on its side stream (copies, their signals) or its own stream
/// (reductions, the waits before them). Steps are listed in the order they are enqueued; that
/// order is what makes an event-based wait meet the post it was meant for.
struct RingStep {
  RingAction action = RingAction::kWait;
  int rank = 0;
  bool side = true;
  int peer = -1, flag = -1;
  RingPlace src, dst, mine;
  std::size_t elements = 0;
  bool last = false;  ///< kReduce: the leg's last rank (an average divides here, by n)
};

struct RingPlan {
  std::vector<RingStep> steps;
  std::size_t chunks = 0;      ///< every leg is cut into this many chunks
  int positions = 0;           ///< reduce legs: scratch positions per rank
  std::size_t chunkBytes = 0;  ///< reduce legs: bytes per position
};

/// The steps of one phase. Chunks of about `targetChunkBytes`; copy legs give every chunk on a
/// link its own signal (at most kMaxCePositions per link), reduce legs rotate through up to
/// kMaxCePositions positions of `scratchBytes` (at least two, chunks kept to a quarter of it)
/// and reuse one only after its receiver signalled it free.
Result<RingPlan> planRing(int n, const RingPhase& phase, std::size_t elementSize, std::size_t targetChunkBytes,
                          std::size_t scratchBytes);

/// The local copies a phase leaves to each rank's own stream: an all-gather's own part, an
/// out-of-place broadcast's root (kCopy steps, side false, src and dst on the same rank).
std::vector<RingStep> ringOwnCopies(CollOp op, int n, std::size_t count, int root, std::size_t elementSize);

}  // namespace gpupeer
