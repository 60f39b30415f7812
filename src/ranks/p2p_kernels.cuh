#pragma once
// Point-to-point sends and receives between any two ranks (pipeline parallelism's rank i ->
// rank j), each pair with its own channel so that they never wait on ranks not involved:
// a sender copies a chunk into one of two slots the receiver keeps for it and raises the
// receiver's `ready` count; the receiver copies the chunk out and raises the sender's `ack`
// count, which frees the slot. Each send and receive has kP2pLanes lanes, lane l moving its
// granules of every chunk with counts of its own (one block's stores carry a few tens of GB/s
// over NVLink, far from the link), and takes p2pBlocksPerTask blocks, each moving its lanes in
// increasing order. Every chunk carries the bytes its message has left from it, so a receive
// whose length differs from the send's is reported (kLengthMismatchError), not read from a
// slot that holds another message. Counts only grow (compared by signed difference) and live in
// device memory, so CUDA graph replays continue them. A group (RankCommunicator::groupStart/
// groupEnd) runs all of its sends and receives in one kernel, so a cycle of them cannot
// deadlock.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "gpupeer/collective_types.hpp"

namespace gpupeer {

/// The most sends and receives one kernel takes: one send to and one receive from each rank,
/// itself included (launchP2pTasks puts further ones in later kernels). The kernel's arguments
/// are copied at every launch, so they hold no more tasks than that.
inline constexpr int kMaxP2pTasks = 2 * kMaxCommRanks;
/// The most blocks per send or receive; each moves its own part of every chunk. On 4x H200 (2 and
/// 4 processes, graphs) 64 lanes of 512 threads carried 128 MiB in 445 us against 507 with 32
/// lanes and 468 with 32 of 1024 threads (NCCL 461); a message of one chunk takes only the lanes
/// its granules reach (P2pLayout::lanesFor), so small ones do not wait for idle blocks.
inline constexpr int kP2pLanes = 64;
/// The lanes take a chunk's bytes in granules of this size, in turn. Dealt in turn rather than in
/// one region per lane, every lane has work from kP2pLanes granules up: with a region of
/// slotBytes / kP2pLanes per lane, a send of up to 128 KiB was one block's alone, and on 2x H200
/// took 12.6 us at 128 KiB across processes against 7.6 at 32 KiB (NCCL 7.9).
inline constexpr std::size_t kP2pGranuleBytes = 4096;

/// One rank's point-to-point memory, in this order: for each sender s, 2 slots of slotBytes
/// (receives from s); then words, each per lane: ready[s] (chunks s has put here), ack[d]
/// (chunks rank d has taken from its slots for this rank), sendSeq[d], recvSeq[s] (this rank's
/// own counts); then for each sender, slot and lane the 64-bit header of the chunk in that
/// slot: the bytes its message had left from that chunk on. (constexpr: the kernels call them
/// too.)
struct P2pLayout {
  int ranks = 0;
  std::size_t slotBytes = 0;
  constexpr std::size_t bytes() const { return headerOffset(ranks, 0, 0); }
  constexpr std::size_t slotOffset(int sender, int slot) const { return (2 * sender + slot) * slotBytes; }
  constexpr std::size_t wordsOffset() const { return 2 * ranks * slotBytes; }
  constexpr std::size_t headerOffset(int sender, int slot, int lane) const {
    return wordsOffset() + 4 * ranks * kP2pLanes * sizeof(std::uint32_t) +
           ((2 * sender + slot) * kP2pLanes + lane) * sizeof(std::uint64_t);
  }
  /// The lane that moves byte `offset` of every chunk: granule g is lane g % kP2pLanes's,
  /// whatever the chunk's length. Lanes move on independently, so a lane whose bytes moved with
  /// the chunk's length would write into a short chunk's bytes that another lane of the
  /// receiver has not read yet. slotBytes is a multiple of 16 x kP2pLanes.
  static constexpr int laneOf(std::size_t offset) { return static_cast<int>(offset / kP2pGranuleBytes % kP2pLanes); }
  /// Where the i-th unit of `unit` bytes (16 or 1; a divisor of the granule) that `lane` moves
  /// lies in a chunk. A lane's units come in increasing order, so it stops at the first that
  /// lies at or past the chunk's end.
  static constexpr std::size_t laneUnit(int lane, std::size_t i, std::size_t unit) {
    const std::size_t perGranule = kP2pGranuleBytes / unit;
    return (static_cast<std::size_t>(lane) + i / perGranule * kP2pLanes) * kP2pGranuleBytes + i % perGranule * unit;
  }
  /// The lanes that take part in a message of `bytes`: lanes 0 to lanesFor - 1. Every lane where
  /// it spans several chunks; else those its granules reach. A send and its receive have the
  /// same length, so a lane with nothing to move skips the message on both sides and its counts
  /// stay in step; the bytes each lane owns never change.
  constexpr int lanesFor(std::size_t bytes) const {
    if (bytes > slotBytes) return kP2pLanes;
    const std::size_t granules = (bytes + kP2pGranuleBytes - 1) / kP2pGranuleBytes;
    return granules < kP2pLanes ? static_cast<int>(granules) : kP2pLanes;
  }
};

/// The blocks each task of a kernel of `tasks` sends and receives takes: one per lane its
/// largest message reaches (`mostLanes`), or fewer, so that all tasks x blocks fit in
/// `blockBudget`. A lane waits for its peer's same lane, so a block that waits for a peer's
/// block that is not resident yet (blocks of tasks beyond what the GPU holds at once) may wait
/// for ever: with 64 lanes, a rank sending to and receiving from each of 8 ranks, itself
/// included, in one group needs 1024 blocks where an H200 holds 264, and a rank's resident
/// blocks can all wait for peers' blocks that are not. With every block resident each lane's two ends
/// progress: a block moves its lanes in increasing order, so the lowest lane not yet moved is
/// the current lane of its block on both ends.
constexpr int p2pBlocksPerTask(int tasks, int mostLanes, int blockBudget) {
  if (tasks <= 0 || mostLanes <= 0) return 0;
  return std::clamp(blockBudget / tasks, 1, mostLanes);
}

struct P2pTask {
  bool send = false;
  int peer = 0;
  void* buffer = nullptr;  ///< send: the source (const); receive: the destination
  std::size_t bytes = 0;
};

struct P2pArgs {
  int rank = 0;
  P2pLayout layout;
  void* memory[kMaxCommRanks] = {};  ///< every rank's point-to-point memory, as this rank maps it
  P2pTask tasks[kMaxP2pTasks];
  int taskCount = 0;
  /// The most blocks one kernel takes (p2pBlocksPerTask): half of those the GPU holds at once
  /// (p2pBlockBudget), so that the kernel's blocks are all resident beside another kernel of
  /// the same size (another communicator's, or work on another stream).
  int blockBudget = 0;
  int blocksPerTask = 0;           ///< launchP2p sets it
  std::uint32_t* error = nullptr;  ///< 1 + the peer not heard from in time, or kAbortedError
  unsigned long long timeoutNs = 0;
  const volatile std::uint32_t* abortWord = nullptr;
};

/// Runs every task of `a` on the current device, in the lanes each takes (P2pLayout::lanesFor).
cudaError_t launchP2p(const P2pArgs& a, cudaStream_t stream);

/// The blocks of the point-to-point kernel `device` holds at once, halved (P2pArgs::blockBudget).
cudaError_t p2pBlockBudget(int device, int* blocks);

/// Loads the point-to-point kernel into the current device's context (see loadKernels).
cudaError_t loadP2pKernels();

}  // namespace gpupeer
