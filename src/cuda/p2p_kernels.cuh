#pragma once
// Point-to-point sends and receives between any two ranks (pipeline parallelism's rank i ->
// rank j), each pair with its own channel so that they never wait on ranks not involved:
// a sender copies a chunk into one of two slots the receiver keeps for it and raises the
// receiver's `ready` count; the receiver copies the chunk out and raises the sender's `ack`
// count, which frees the slot. Counts only grow (compared by signed difference) and live in
// device memory, so CUDA graph replays continue them. One block per send or receive; a group
// (RankCommunicator::groupStart/groupEnd) runs all of its sends and receives in one kernel,
// so a cycle of them cannot deadlock.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpupeer/collective_types.hpp"

namespace gpupeer {

/// The most sends and receives one kernel takes (one block each).
inline constexpr int kMaxP2pTasks = 2 * kMaxCommRanks * 4;

/// One rank's point-to-point memory, in this order: for each sender s, 2 slots of slotBytes
/// (receives from s); then words: ready[s] (chunks s has put here), ack[d] (chunks rank d has
/// taken from its slots for this rank), sendSeq[d], recvSeq[s] (this rank's own counts).
/// (constexpr: the kernels call them too.)
struct P2pLayout {
  int ranks = 0;
  std::size_t slotBytes = 0;
  constexpr std::size_t bytes() const { return 2 * ranks * slotBytes + 4 * ranks * sizeof(std::uint32_t); }
  constexpr std::size_t slotOffset(int sender, int slot) const { return (2 * sender + slot) * slotBytes; }
  constexpr std::size_t wordsOffset() const { return 2 * ranks * slotBytes; }
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

/// Runs every task of `a` on the current device, one block each.
cudaError_t launchP2p(const P2pArgs& a, cudaStream_t stream);

/// Loads the point-to-point kernel into the current device's context (see loadKernels).
cudaError_t loadP2pKernels();

}  // namespace gpupeer
