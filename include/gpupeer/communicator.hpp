#pragma once
/// \file communicator.hpp
/// Collectives between the GPUs of one process (one stream per GPU), over P2P: all-reduce,
/// all-gather, reduce-scatter, broadcast, reduce, alltoall and send/recv. Small and medium
/// messages take one kernel per GPU (one-shot: push to peers, flag barrier, finish locally);
/// medium reductions on cudaMalloc buffers a kernel that reads the peers' buffers directly
/// (pull); large ones the copy engines, with a local reduction kernel pipelined behind the
/// copies.
/// The choice per size is data (collective_algo.hpp); CommunicatorOptions::algorithm
/// (GPUPEER_ALGO) overrides it. Without
/// P2P every operation takes the copy-engine algorithm, whose copies CUDA then stages through
/// host memory; the communicator says so (transport()).
///
/// Every operation is stream-ordered (after the work already on each rank's stream, before
/// the work enqueued later), needs no host synchronisation between operations, and can be
/// captured in one CUDA graph that spans all ranks' streams (begin the capture on one rank's
/// stream and fork the others from it with events). One communicator takes calls from one
/// thread at a time.

#include <memory>
#include <string>
#include <vector>

#include "gpupeer/collective_algo.hpp"
#include "gpupeer/collective_types.hpp"
#include "gpupeer/cuda_stream.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

/// How a communicator moves data: scratch sizes, grids, steps and switches. The defaults are
/// the measured ones (docs/collectives.md); fromEnvironment() fills them from the GPUPEER_
/// tuning variables, each of which sets one field (docs/collectives.md lists them). The grid
/// and step fields are for re-measuring on other machines (scripts/gpu.sh tune).
struct CommunicatorOptions {
  /// A field left to its rule (of the rank count, the links or the message size).
  static constexpr std::size_t kByRule = ~std::size_t{0};

  /// The defaults with every GPUPEER_ tuning variable that is set (and not empty) applied;
  /// kInvalidArgument naming the variable for a value that does not parse or is out of range.
  static Result<CommunicatorOptions> fromEnvironment();

  /// One-shot scratch per rank: 2 x ranks slots of this size. Larger one-shot messages go in
  /// pieces. (Beside it, where every pair is joined by NVLink, the 128-byte lines' 2 x ranks
  /// slots, of 18 MiB on 2 GPUs (72 MiB per GPU) and of 2 MiB from 3; and the 16-byte lines'
  /// 2 x ranks slots of 2 MiB.)
  std::size_t oneShotSlotBytes = 16u << 20;
  /// Copy-engine scratch per rank and sender: ranks x this per rank. A message up to this size
  /// per sender goes without waiting for slots to free up; larger ones reuse them in turn.
  std::size_t ceSlotBytes = 128u << 20;
  /// The ring's chunks, which follow each other from GPU to GPU (reduce chunks stay within a
  /// quarter of the copy-engine scratch). Broadcast and reduce (one chain, whose far end idles
  /// until the first chunk arrives): about this size. All-gather, reduce-scatter and all-reduce
  /// (every link busy from the start): at least ringSpreadChunkBytes. Each chunk costs ~5-8 us
  /// of signalling on 4x H200 (the ring's row in docs/collectives.md).
  std::size_t ringChunkBytes = 8u << 20;
  std::size_t ringSpreadChunkBytes = 32u << 20;  ///< see ringChunkBytes
  /// The chain kernel's step per block, broadcast and reduce (a multiple of 16): a rank
  /// forwards a step once it has arrived, so the far end waits about ranks - 1 steps of the
  /// whole grid, and each step costs a flag. Measured on 4x H200 at 64-256 MiB, in one process
  /// and across processes (the chain's row in docs/collectives.md). Raised where a message
  /// would take more than 4000 steps per block; a reduce's also kept within the one-shot
  /// scratch (two steps per block at least).
  std::size_t chainStepBytes = 32u << 10;
  std::size_t chainReduceStepBytes = 32u << 10;  ///< see chainStepBytes
  /// The algorithm for every operation it can serve (oneshot, twoshot, pull, split, chain,
  /// relay, ce, ring); "": the table's choice.
  std::string algorithm;
  /// Stage every copy through host memory, as between GPUs without P2P.
  bool disableP2p = false;
  /// Without P2P, copies of 8 MiB and more go through gpupeer's staged pipeline (4 MiB chunks
  /// through three pinned buffers per ordered pair of GPUs); false: every copy through CUDA's
  /// own staging, slower but holding no pinned host memory.
  bool stagedPipeline = true;
  /// A launch thread per rank where the process has a CPU for each; false: every rank's
  /// kernels are launched from the calling thread.
  bool launchThreads = true;
  /// Whose copy engines carry the copy-engine algorithm's plain copies (all-gather, alltoall,
  /// send/recv, broadcast): by rule the receivers' on 2 GPUs and the senders' from 3.
  enum class CeIssue { kByRule, kSender, kReceiver };
  CeIssue ceIssue = CeIssue::kByRule;
  /// The one-shot kernel's most blocks (1 to 512); 0: the launch's rule.
  int oneShotBlocks = 0;
  /// The one-shot kernel's step between flags above 1 MiB; 0: the rule's (16 KiB from 3 ranks
  /// across processes, else the kernel's 32 KiB: src/collectives/one_shot_step_rules.hpp).
  std::size_t oneShotStepBytes = 0;
  /// Each slot of the one-shot kernel's 16-byte lines (2 x ranks slots per GPU); pieces up to
  /// half of it go in lines. Measured on 2x H200 (the one-shot row in docs/collectives.md).
  std::size_t lineSlotBytes = 2u << 20;
  /// Lines per block of the 16-byte lines (a multiple of 32, up to 512); 0: the launch's rule.
  int lineBlockLines = 0;
  /// Each slot of the 128-byte lines (a multiple of 4 KiB; 0: none); kByRule: 18 MiB on 2 GPUs,
  /// 2 MiB from 3. Used only where every pair of GPUs has native atomics (NVLink).
  std::size_t line128SlotBytes = kByRule;
  /// The smallest piece that takes 128-byte lines; kByRule: every piece on 2 GPUs, 64 KiB from 3.
  std::size_t line128FromBytes = kByRule;
  /// The pull and split kernels' grid: a block per this much of a part (at least 1 KiB); 0:
  /// the rule of collectives/pull_plan.hpp.
  std::size_t pullBlockBytes = 0;
  /// The pull and split kernels' tiles, dealt to the blocks in turn (a multiple of 16; 0: one
  /// range per block); kByRule: the rule of collectives/pull_plan.hpp.
  std::size_t pullTileBytes = kByRule;
  /// How long a kernel waits for a peer at a barrier before it gives up and records which
  /// (checkBarriers, pollBarriers), in ms, at least 1. The ranks of one process are launched
  /// together, so a wait this long means a GPU held by other work. libgpupeer_nccl.so sets its
  /// GPUPEER_NCCL_TIMEOUT_MS here: NCCL waits without bound, and its programs may keep a GPU
  /// busy for minutes.
  int barrierTimeoutMs = 10000;
};

/// Collectives over a fixed set of GPUs of this process. Owns its scratch memory, signals,
/// streams and events (freed by the destructor, which must not run while operations are still
/// in flight: synchronise the streams first). Buffers and streams stay the caller's. One thread
/// at a time may call it; operations are ordered on the streams they are given.
class Communicator {
 public:
  /// A communicator over `devices` (rank i is devices[i]; 2 to kMaxCommRanks GPUs) as
  /// `options` say; the environment is not read. Enables P2P between all pairs, or records why
  /// it cannot (CommunicatorOptions::disableP2p, a pair without P2P) and works without it.
  /// kInvalidArgument for an option out of its range.
  static Result<std::unique_ptr<Communicator>> create(const std::vector<int>& devices,
                                                      const CommunicatorOptions& options);
  /// The same with CommunicatorOptions::fromEnvironment().
  static Result<std::unique_ptr<Communicator>> create(const std::vector<int>& devices);
  ~Communicator();

  int ranks() const;           ///< number of GPUs
  int device(int rank) const;  ///< CUDA ordinal of `rank`
  bool p2p() const;            ///< whether every pair has peer access (else copies are staged)
  /// "P2P between all 2 GPUs" or why the copies are staged through host memory.
  const std::string& transport() const;
  /// The algorithm an operation of `bytes` (nccl-tests' size column) would take on buffers
  /// from cudaMalloc, out of place or in place (in place, all-reduce cannot pull).
  Result<CollAlgo> algorithmFor(CollOp op, std::size_t bytes, bool inPlace = false) const;

  // One send and receive buffer and one stream per rank; in place when a rank's buffers are
  // the same (all-gather: send == recv + rank x count; reduce-scatter: recv == send + rank x
  // count). Every argument is checked before anything is enqueued: a buffer that is not device
  // memory of its rank's GPU (freed, host, another GPU's) or is smaller than the operation needs
  // is refused by the driver's pointer attributes. What they cannot tell stays the caller's
  // contract: memory freed and allocated again at the same address, or freed while an operation
  // on it is still in its stream.

  /// recv[r] = send[0] op ... op send[n-1], `count` elements.
  Status allReduce(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                   DataType type, RedOp op, const std::vector<cudaStream_t>& streams);
  /// recv[r] = send[0] | send[1] | ... (each `count` elements).
  Status allGather(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                   DataType type, const std::vector<cudaStream_t>& streams);
  /// recv[r] = chunk r of (send[0] op ... op send[n-1]); send holds ranks x `count` elements.
  Status reduceScatter(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                       DataType type, RedOp op, const std::vector<cudaStream_t>& streams);
  /// recv[r] = send[root]; only the root's send buffer is read.
  Status broadcast(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                   DataType type, int root, const std::vector<cudaStream_t>& streams);
  /// recv[root] = send[0] op ... op send[n-1]; only the root's receive buffer is written
  /// (the others may be null).
  Status reduce(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count, DataType type,
                RedOp op, int root, const std::vector<cudaStream_t>& streams);
  /// Chunk q of recv[r] = chunk r of send[q]; chunks of `count` elements.
  Status allToAll(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                  DataType type, const std::vector<cudaStream_t>& streams);
  /// recv[(r + 1) % n] = send[r] (nccl-tests' sendrecv: every rank sends to the next).
  Status sendRecv(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                  DataType type, const std::vector<cudaStream_t>& streams);
  /// Any of the above by name; `redop` and `root` are ignored where they do not apply.
  Status run(CollOp op, const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
             DataType type, RedOp redop, int root, const std::vector<cudaStream_t>& streams);

  /// After synchronising the streams: kTimeout naming the rank that did not arrive at a
  /// barrier within CommunicatorOptions::barrierTimeoutMs, else ok. Clears the record.
  Status checkBarriers();
  /// What checkBarriers would return, without waiting for any stream and without clearing the
  /// record: for a watchdog thread while operations may still run (any thread).
  Status pollBarriers() const;

  struct Impl;  ///< private state (public only so the algorithms' files can reach it)

 private:
  explicit Communicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpupeer
