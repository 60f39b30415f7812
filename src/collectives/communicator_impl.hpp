#pragma once
// The communicator's state and the ways it moves data (one_shot_path.cpp: one-shot and pull
// kernels; copy_engine_path.cpp: copy engines, and the side-stream barriers and copies between
// ranks that ring_path.cpp shares). Internal to the library.

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collectives/ce_issuer.hpp"
#include "collectives/launch_pool.hpp"
#include "collectives/one_shot_kernels.cuh"
#include "collectives/pull_plan.hpp"
#include "collectives/signal_numbers.hpp"
#include "cuda/device_memory.hpp"
#include "gpupeer/communicator.hpp"
#include "ranks/rank_signals.hpp"
#include "transfer/staged_pipeline.hpp"

namespace gpupeer {

/// One collective call, checked (see validateRequest) and normalised: count > 0, one entry
/// per rank, unused buffers (broadcast's non-root send, reduce's non-root recv) replaced by
/// the rank's other buffer so no kernel argument is null.
struct CollRequest {
  CollOp op = CollOp::kAllReduce;
  DataType type = DataType::kFloat32;
  RedOp redop = RedOp::kSum;
  int root = 0;
  std::size_t count = 0;
  std::vector<const void*> send;
  std::vector<void*> recv;
  std::vector<cudaStream_t> streams;
  /// Every buffer that peers would read comes from cudaMalloc (peer access maps it), so the
  /// pull kernel may read it (see validateRequest).
  bool peersCanRead = true;
  /// Likewise for every receive buffer, so the split kernel may write it.
  bool peersCanWrite = true;
};

/// Memory of `device` with at least `bytes` from p on (rank and which name it in the error).
/// *fromCudaMalloc (when given) says whether the allocation is an ordinary cudaMalloc one,
/// which peer access maps into every peer (pool and virtual-memory allocations need their own
/// access grants).
/// *allocation (when given) receives the allocation's first byte (null where unknown).
Status checkBuffer(const void* p, std::size_t bytes, int device, int rank, const char* which,
                   bool* fromCudaMalloc = nullptr, const char** allocation = nullptr);

/// Checks `q` for the ranks this process drives (Impl::local): root, operator and type, every
/// buffer's device and size, overlaps; then normalises it (see CollRequest).
Status validateRequest(const Communicator::Impl& c, CollRequest& q);

/// Whether rank `rank`'s buffers are the in-place arrangement for `op`.
bool isInPlace(const CollRequest& q, int rank);

/// Without P2P, copies of at least this many bytes go through gpupeer's staged pipeline,
/// smaller ones through CUDA's own staging (copyBetween).
inline constexpr std::size_t kStagingMinBytes = 8u << 20;

struct Communicator::Impl {
  std::vector<int> devices;
  // As given; the fields below hold what their rules resolve to for these ranks and links.
  CommunicatorOptions options;
  std::string algorithmOverride;
  bool p2p = true;       // between every pair
  bool ringP2p = false;  // from every rank to the next and back (true where p2p is)
  std::string transport;
  // The 128-byte lines' slots (0 without NVLink between every pair), how much of one the
  // one-shot kernel fills (the relay fills it all: across processes its slots are larger), and
  // the smallest piece that takes them (options.line128*, by default
  // collectives/line128_rules.hpp's for the ranks).
  std::size_t line128SlotBytes = 0;
  std::size_t line128OneShotSlotBytes = 0;
  std::size_t line128FromBytes = 0;
  // The fewest SMs of the ranks' GPUs: the pull and chain kernels' grids stay resident (their
  // block b meets block b of every peer).
  int fewestSms = 132;
  CeIssuer ceIssuer = CeIssuer::kSender;  // options.ceIssue, by default ceIssuerFor(ranks)
  struct Rank {
    // One-shot: scratch (2 parities x ranks slots), flags (kOneShotFlagBytes: [block][sender]
    // and the call lines), and counters (kCounterWords: the 64-bit operation counter, the
    // error word, a mismatched call's signatures).
    DeviceBuffer scratch, flags, counters;
    // The one-shot kernel's low-latency variant: lines that carry their own flags.
    DeviceBuffer lineScratch;
    // Its 128-byte variant: lines of 120 data bytes and a flag.
    DeviceBuffer line128Scratch;
    // Copy engine: scratch (ranks x depth chunks), a side stream for the copies, and events.
    DeviceBuffer ceScratch;
    Stream copyStream;
    Event start, copiesDone;
    std::vector<Event> copied;  // per pipeline position, kept depth + 2 deep
    // Across processes, per pipeline position: the receivers freed it (awaited on the rank's
    // stream, handed to its side stream). And a stream that tells the receivers what the side
    // stream's copies landed, so that its copies follow each other without a gap.
    std::vector<Event> freed;
    Stream postStream;
    Event postsDone;
    bool hopperOrLater = false;  // programmatic dependent launch available
  };
  std::vector<Rank> ranks;
  /// Every rank's one-shot buffers as this process reaches them: its own ranks' from `ranks`,
  /// another process's through imported memory handles (RankCommunicator).
  struct ScratchView {
    void* scratch = nullptr;
    std::uint32_t* flags = nullptr;
    void* lineScratch = nullptr;
    void* line128Scratch = nullptr;
  };
  std::vector<ScratchView> views;
  /// The ranks this process launches kernels for: all of them in one process, one where each
  /// process drives its own GPU (the other ranks' buffers, streams and counters are not here).
  std::vector<int> local;
  /// Where the ranks live in several processes: scratch into which a local buffer that is not
  /// 8-byte aligned is copied, so that every rank takes the same one-shot variant whatever the
  /// alignment of the buffers it cannot see (empty in one process, which sees them all).
  DeviceBuffer alignStaging;
  /// The one-shot kernels show their peers the call they belong to and report a peer whose
  /// call differs (OneShotArgs::call): where each rank's calls come from its own process.
  bool callLines = false;
  /// Passed to the kernels (OneShotArgs::timeoutNs, abortWord): one process's from
  /// CommunicatorOptions::barrierTimeoutMs, a rank's from its options' timeoutMs.
  unsigned long long timeoutNs = 10'000'000'000ULL;
  const volatile std::uint32_t* abortWord = nullptr;
  RankSignals signals;  // ordering between ranks' streams in the copy-engine algorithm
  // Without P2P: per ordered pair of ranks, device -> pinned host -> device in overlapped
  // chunks (the transfer engine's pipeline), ~1.4x CUDA's own staging of a copy between GPUs
  // without peer access (bench/results/h200x2/2026-11-22-transfer). Made at create(): pinned memory cannot be
  // allocated while a CUDA graph is captured. Empty with P2P or without options.stagedPipeline.
  std::map<std::pair<int, int>, std::unique_ptr<StagedPipeline>> staged;  // for copies >= kStagingMinBytes
  std::unique_ptr<LaunchPool> pool;                                       // null: every launch from the calling thread

  int n() const { return static_cast<int>(devices.size()); }
  /// Every rank is this process's (the one-process communicator): the host holds every rank's
  /// buffers. False for a RankCommunicator's core, whose one local rank is its own.
  bool allRanksLocal() const { return static_cast<int>(local.size()) == n(); }
  std::uint32_t* counters(int r) const { return static_cast<std::uint32_t*>(ranks[r].counters.get()); }
};

inline const char* at(const void* p, std::size_t bytes) { return static_cast<const char*>(p) + bytes; }
inline char* at(void* p, std::size_t bytes) { return static_cast<char*>(p) + bytes; }

/// A rank's side stream and the copy-engine algorithm's events on `device` (current); where the
/// ranks live in several processes also the "freed" events and the posting stream.
Status createSideStream(Communicator::Impl::Rank& rank, int device, bool acrossProcesses);

/// Every rank's side stream (copyStream) starts after its own stream reaches the operation and
/// after every peer has arrived at it: no copy lands in a buffer that the previous operation
/// may still use (copy_engine_path.cpp).
Status beginSideStreams(Communicator::Impl& c, const CollRequest& q);
/// Every rank's stream continues after its side stream and, when `awaitPeers`, after every
/// peer's side stream; the side streams rejoin the ranks' streams, as graph capture requires.
Status endSideStreams(Communicator::Impl& c, const CollRequest& q, bool awaitPeers);
/// A copy of `bytes` from rank `from`'s memory to rank `to`'s, ordered on `stream` (of rank
/// `from`): cudaMemcpyAsync, or without P2P the host-staged pipeline of the pair (see
/// Impl::staged); nothing for 0 bytes or dst == src.
Status copyBetween(Communicator::Impl& c, int from, int to, void* dst, const void* src, std::size_t bytes,
                   cudaStream_t stream);

/// Runs a checked request by `algo`: both communicators' dispatch (a rank in its own process
/// gets only the algorithms through the scratch from chooseAlgorithm).
Status runAlgorithm(Communicator::Impl& c, const CollRequest& q, CollAlgo algo);
/// `count` elements of `type` cut into `parts` parts of whole 16-byte units (each part then
/// starts as aligned as the buffer, and moves as vectors where it is), and the elements left.
struct WholeUnitParts {
  std::size_t part, rest;
};
WholeUnitParts wholeUnitParts(std::size_t count, DataType type, int parts);
/// `q` narrowed to `count` elements from element `first` of every local rank's buffers (a
/// null buffer stays null).
CollRequest elementsFrom(const Communicator::Impl& c, const CollRequest& q, std::size_t first, std::size_t count);

Status runOneShot(Communicator::Impl& c, const CollRequest& q);
/// All-reduce as a reduce-scatter into each rank's share of the output, then an all-gather of
/// it in place, each by the algorithm its own size calls for (through the scratch alone where
/// the ranks are in other processes); the elements that do not divide evenly go through one
/// one-shot all-reduce. The parts come from a checked request, so they are not checked again.
Status runTwoShot(Communicator::Impl& c, const CollRequest& q);
/// Where the ranks live in several processes, a call whose buffers lie in registered buffers
/// (RankCommunicator::registerBuffer): this rank's table and its buffers' references into it
/// (OneShotArgs::registered).
struct RegisteredCall {
  const RegisteredBuffer* table = nullptr;
  std::uint32_t sendRef[2] = {}, recvRef[2] = {};
};
/// The pull kernel: `split` false is CollAlgo::kPull, true CollAlgo::kSplit (pull_plan.hpp).
/// With `registered`, only this process's rank is launched and the peers' buffers are found in
/// the kernel from their call lines.
Status runPull(Communicator::Impl& c, const CollRequest& q, bool split, const RegisteredCall* registered = nullptr);
/// The chain kernel (broadcast, reduce): each rank stores every step into the next (one_shot_path.cpp).
Status runChain(Communicator::Impl& c, const CollRequest& q);
/// The relay kernel (broadcast, reduce) on a part per non-root rank, each part a multiple of 16
/// bytes; the elements left over go through the one-shot kernel (one_shot_path.cpp).
Status runRelay(Communicator::Impl& c, const CollRequest& q);
Status runCopyEngine(Communicator::Impl& c, const CollRequest& q);
/// The ring (ring_path.cpp): every byte moves from rank r to rank r+1 by copy engine.
Status runRing(Communicator::Impl& c, const CollRequest& q);

}  // namespace gpupeer
