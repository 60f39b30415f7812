#pragma once
// Point-to-point sends and receives between any two ranks (pipeline parallelism's rank i ->
// rank j), each pair with its own channel so that they never wait on ranks not involved:
// a sender copies a chunk into one of two slots the receiver keeps for it and raises the
// receiver's `ready` count; the receiver copies the chunk out and raises the sender's `ack`
// count, which frees the slot. Each send and receive runs as kP2pLanes blocks, lane l moving
// its granules of every chunk with counts of its own: one block's stores carry a few tens of
// GB/s over NVLink, far from the link. Counts only grow (compared by signed difference) and live in
// device memory, so CUDA graph replays continue them. A group (RankCommunicator::groupStart/
// groupEnd) runs all of its sends and receives in one kernel, so a cycle of them cannot
// deadlock.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpupeer/collective_types.hpp"

namespace gpupeer {

/// The most sends and receives one kernel takes.
inline constexpr int kMaxP2pTasks = 2 * kMaxCommRanks * 4;
/// Blocks per send or receive; each moves its own part of every chunk.
inline constexpr int kP2pLanes = 32;
/// The lanes take a chunk's bytes in granules of this size, in turn. Dealt in turn rather than in
/// one region per lane, every lane has work from 32 granules (128 KiB) up: with a region of
/// slotBytes / kP2pLanes per lane, a send of up to 128 KiB was one block's alone, and on 2x H200
/// took 12.6 us at 128 KiB across processes against 7.6 at 32 KiB (NCCL 7.9).
inline constexpr std::size_t kP2pGranuleBytes = 4096;

/// One rank's point-to-point memory, in this order: for each sender s, 2 slots of slotBytes
/// (receives from s); then words, each per lane: ready[s] (chunks s has put here), ack[d]
/// (chunks rank d has taken from its slots for this rank), sendSeq[d], recvSeq[s] (this rank's
/// own counts). (constexpr: the kernels call them too.)
struct P2pLayout {
  int ranks = 0;
  std::size_t slotBytes = 0;
  constexpr std::size_t bytes() const { return 2 * ranks * slotBytes + 4 * ranks * kP2pLanes * sizeof(std::uint32_t); }
  constexpr std::size_t slotOffset(int sender, int slot) const { return (2 * sender + slot) * slotBytes; }
  constexpr std::size_t wordsOffset() const { return 2 * ranks * slotBytes; }
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
};

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
  std::uint32_t* error = nullptr;  ///< 1 + the peer not heard from in time, or kAbortedError
  unsigned long long timeoutNs = 0;
  const volatile std::uint32_t* abortWord = nullptr;
};

/// Runs every task of `a` on the current device, kP2pLanes blocks each.
cudaError_t launchP2p(const P2pArgs& a, cudaStream_t stream);

/// Loads the point-to-point kernel into the current device's context (see loadKernels).
cudaError_t loadP2pKernels();

}  // namespace gpupeer
