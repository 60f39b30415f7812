#pragma once
// The state of one rank of a RankCommunicator: the one-process communicator's state with this
// rank as its only local rank (so the same checks, kernels and variant rules run), the peers'
// buffers mapped into this process, and the point-to-point channels. Internal.

#include <atomic>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collectives/communicator_impl.hpp"
#include "gpupeer/rank_communicator.hpp"
#include "ranks/bootstrap.hpp"
#include "ranks/p2p_kernels.cuh"
#include "ranks/peer_memory.hpp"

namespace gpupeer {

/// What every rank tells the others about itself at start-up.
struct PeerIdentity {
  int pid = 0;
  int device = -1;  ///< the ordinal in its own process
  std::string busId;
};

/// A buffer registered with RankCommunicator::registerBuffer: this rank's range and the
/// peers' allocations it keeps mapped (shared by the registrations in one allocation: a
/// process maps a peer's allocation once).
struct Registration {
  bool live = false;
  const char* base = nullptr;  ///< this rank's registered range
  std::size_t bytes = 0;
  const char* mechanism = "";  ///< how the peers mapped it (RankCommunicator::registrationMechanism)
  std::vector<std::shared_ptr<MappedPeerBuffer>> mapped;
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
  // The start-up exchange, kept for registerBuffer (collective too): the socket bootstrap's
  // connections (when init made them) and the all-gather over them or the caller's.
  Bootstrap bootstrap;
  AllGatherFn exchange;
  // Registered buffers by index (never reused) and the kernels' table of them
  // (RegisteredBuffer [kMaxRegistrations][kMaxCommRanks]); calls of at least zeroCopyFromBytes
  // per rank inside them take the pull kernel.
  std::vector<Registration> registrations;
  std::map<std::pair<int, std::uint64_t>, std::weak_ptr<MappedPeerBuffer>> peerAllocations;  // (rank, its pointer)
  DeviceBuffer registeredTable;
  std::size_t zeroCopyFromBytes = 0;

  int n() const { return core.n(); }
  std::uint32_t* errorWord() const { return core.counters(rank) + 2; }
};

/// Builds the communicator's memory and maps the peers' once `exchange` (an all-gather of
/// blobs, in rank order) works: the socket bootstrap's or the caller's.
Status initRank(RankCommunicator::Impl& c, int nranks, int rank, const RankCommOptions& options,
                const AllGatherFn& exchange, const std::string& how);

/// One exchange of JSON objects through `exchange`: every rank's, parsed, or an error naming
/// the step and rank.
Result<std::vector<nlohmann::json>> exchangeJson(const AllGatherFn& exchange, const nlohmann::json& mine, int ranks,
                                                 const char* step);
/// A SharedBuffer as JSON and back (false: malformed).
nlohmann::json sharedJson(const SharedBuffer& b);
bool sharedFromJson(const nlohmann::json& j, SharedBuffer& b);

/// RankCommunicator::registerBuffer and deregisterBuffer (rank_registration.cpp).
Status registerRankBuffer(RankCommunicator::Impl& c, void* ptr, std::size_t bytes);
Status deregisterRankBuffer(RankCommunicator::Impl& c, void* ptr);
/// Whether [p, p + bytes) lies in a live registration; its reference (OneShotArgs::sendRef).
bool findRegistered(const RankCommunicator::Impl& c, const void* p, std::size_t bytes, std::uint32_t ref[2]);

/// Enqueues `tasks` on `stream`, each send and receive of a peer at most once per kernel.
Status launchP2pTasks(RankCommunicator::Impl& c, const std::vector<P2pTask>& tasks, cudaStream_t stream);

}  // namespace gpupeer
