#pragma once
// Point-to-point sends and receives between any two ranks (pipeline parallelism's rank i ->
// rank j), each pair with its own channel so that they never wait on ranks not involved:
// a sender copies a chunk into one of two slots the receiver keeps for it and raises the
// receiver's `ready` count; the receiver copies the chunk out and raises the sender's `ack`
// count, which frees the slot. Each send and receive runs as kP2pLanes blocks, lane l moving
// part l of every chunk with counts of its own: one block's stores carry a few tens of GB/s
// over NVLink, far from the link. Counts only grow (compared by signed difference) and live in
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
  /// Where lane `lane`'s part of a chunk of `len` bytes begins (it ends where lane + 1's
  /// begins; lane kP2pLanes begins at len). Each lane owns the same region of every slot,
  /// slotBytes / kP2pLanes, whatever the chunk's length: lanes move on independently, and a
  /// lane whose region moved with the chunk's length would write into a short chunk's part that
  /// another lane of the receiver has not read yet. slotBytes is a multiple of 16 x kP2pLanes.
  constexpr std::size_t laneBegin(std::size_t len, int lane) const {
    const std::size_t at = slotBytes / kP2pLanes * static_cast<std::size_t>(lane);
    return lane >= kP2pLanes || at > len ? len : at;
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
