#pragma once
// The state of one rank of a RankCommunicator: the one-process communicator's state with this
// rank as its only local rank (so the same checks, kernels and variant rules run), the peers'
// buffers mapped into this process, and the point-to-point channels. Internal.

#include <atomic>
#include <string>
#include <vector>

#include "comm/communicator_impl.hpp"
#include "comm/peer_memory.hpp"
#include "cuda/p2p_kernels.cuh"
#include "gpupeer/rank_communicator.hpp"

namespace gpupeer {

/// What every rank tells the others about itself at start-up.
struct PeerIdentity {
  int pid = 0;
  int device = -1;  ///< the ordinal in its own process
  std::string busId;
};

struct RankCommunicator::Impl {
  PinnedBuffer abortWord;  // first member: freed last, after every kernel that reads it ended
  Communicator::Impl core;
  int rank = 0;
  int device = -1;
  std::vector<PeerIdentity> peers;
  std::vector<MappedPeerBuffer> mapped;
  DeviceBuffer p2pMemory;
  P2pArgs p2p;  // layout, every rank's memory, error and bounds; the tasks per launch
  std::vector<P2pTask> group;
  cudaStream_t groupStream = nullptr;
  int groupDepth = 0;
  std::string transport;
  std::atomic<bool> aborted{false};
  Status failure;  // sticky once an operation failed

  int n() const { return core.n(); }
  std::uint32_t* errorWord() const { return core.counters(rank) + 2; }
};

/// Builds the communicator's memory and maps the peers' once `exchange` (an all-gather of
/// blobs, in rank order) works: the socket bootstrap's or the caller's.
Status initRank(RankCommunicator::Impl& c, int nranks, int rank, const RankCommOptions& options,
                const AllGatherFn& exchange, const std::string& how);

/// Enqueues `tasks` on `stream`, each send and receive of a peer at most once per kernel.
Status launchP2pTasks(RankCommunicator::Impl& c, const std::vector<P2pTask>& tasks, cudaStream_t stream);

}  // namespace gpupeer
