#pragma once
/// \file rank_communicator.hpp
/// Collectives with one process (or one thread) per GPU, shaped like NCCL: rank 0 makes a
/// UniqueId, the caller hands it to every rank out of band (a file, MPI, a torch store), and
/// each rank calls RankCommunicator::init on its own GPU. Peers map each other's scratch and
/// flags through exported memory handles; the kernels are the one-process communicator's.
///
/// Every operation is stream-ordered on the caller's stream, needs no host synchronisation
/// between operations and can be captured in a CUDA graph (each process captures its own).
/// Every rank must call the same operations in the same order with the same count, type, op
/// and root (NCCL's contract). Each collective's kernel shows its peers its call (operation,
/// type, reduction operator, root, the call's count) and compares theirs: a collective that
/// differs in any of these makes every rank involved fail with kInvalidArgument naming both
/// calls instead of hanging. Buffers (no rank sees another's pointers), a collective against a
/// send/recv, and send/recv sizes stay the caller's contract (docs/multi-process.md). Every
/// cross-process wait is bounded (CommOptions::timeoutMs): a rank that dies or never calls in
/// makes the others fail with kTimeout naming it, never hang. One communicator takes calls
/// from one thread at a time; abort() may be called from any thread.

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "gpupeer/collective_types.hpp"
#include "gpupeer/cuda_stream.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

/// An opaque blob that names one communicator's rendezvous (like ncclUniqueId): copy its bytes
/// to every rank. It holds the bootstrap's socket name and a random nonce.
struct UniqueId {
  static constexpr std::size_t kBytes = 128;
  std::array<char, kBytes> bytes{};
};

/// A fresh id; call once, on one rank. Fails only if the system's random source fails.
Result<UniqueId> makeUniqueId();

/// The id as 256 hex digits, for command lines, environment variables and files; and back
/// (kInvalidArgument for text that is not 256 hex digits).
std::string uniqueIdToHex(const UniqueId& id);
Result<UniqueId> uniqueIdFromHex(std::string_view text);

/// Lets a framework that already has a store or process group carry the start-up exchange:
/// called once per exchange with this rank's blob; must return every rank's blob in rank
/// order (`ranks` x blob.size() bytes), or an error. Used instead of the socket bootstrap.
using AllGatherFn = std::function<Result<std::string>(const std::string& blob)>;

struct RankCommOptions {
  /// The GPU this rank drives; -1: the calling thread's current device.
  int device = -1;
  /// Bound on every wait for other ranks (start-up, barriers inside kernels, teardown).
  int timeoutMs = 30000;
  /// One-shot scratch per rank: 2 x ranks slots of this size; larger messages go in pieces.
  /// 0: defaultSlotBytes(ranks).
  std::size_t slotBytes = 0;
  /// zeroCopyFromBytes left to the rule.
  static constexpr std::size_t kZeroCopyByRule = ~std::size_t{0};
  /// All-reduces, all-gathers, reduce-scatters, broadcasts and reduces of at least this many
  /// bytes per rank whose buffers lie in registered buffers (registerBuffer) read and write the
  /// peers' buffers directly (the pull kernel) instead of going through the scratch.
  /// kZeroCopyByRule: where that was measured faster (2 ranks: all-reduce and reduce-scatter
  /// from 64 MiB, all-gather from 32 MiB; more ranks: all-gather from 4 MiB, broadcast from
  /// 32 MiB below 128 MiB; src/ranks/zero_copy_rules.hpp).
  /// Must be the same on every rank (a call that takes the pull kernel on some ranks only is
  /// reported as a mismatch).
  std::size_t zeroCopyFromBytes = kZeroCopyByRule;

  /// The slot of `ranks` ranks where slotBytes is 0: 16 MiB up to 4 ranks, where fewer, larger
  /// pieces move large messages faster (2x H200, all-reduce of 256 MiB in graphs: 853 us in
  /// 16 MiB pieces against 1010 in 4 MiB ones, NCCL 893; 4x H200: 1295 against 1522, NCCL 1180;
  /// all-gather 688 against 780, NCCL 657), 4 MiB from 5 ranks, whose scratch (2 x ranks slots)
  /// would grow past 160 MiB.
  static std::size_t defaultSlotBytes(int ranks) { return ranks <= 4 ? 16u << 20 : 4u << 20; }
};

class RankCommunicator {
 public:
  /// Joins communicator `id` as `rank` of `nranks` (1 to kMaxCommRanks) through the socket
  /// bootstrap. Returns when every rank has joined, or kTimeout naming the ranks missing.
  static Result<std::unique_ptr<RankCommunicator>> init(int nranks, const UniqueId& id, int rank,
                                                        const RankCommOptions& options = {});
  /// The same, with the caller's all-gather carrying the exchange; the communicator keeps a
  /// copy of it for registerBuffer's and deregisterBuffer's exchanges.
  static Result<std::unique_ptr<RankCommunicator>> initWithAllGather(int nranks, int rank, const AllGatherFn& allGather,
                                                                     const RankCommOptions& options = {});
  /// Frees this rank's memory and unmaps the peers'; never waits for other ranks.
  ~RankCommunicator();

  int rank() const;
  int ranks() const;
  int device() const;
  /// "cuMem handles over a Unix socket between 2 processes" or how peers are mapped.
  const std::string& transport() const;
  /// Each one-shot slot (RankCommOptions::slotBytes as given, or its default).
  std::size_t slotBytes() const;
  /// The algorithm a collective of `bytes` (nccl-tests' size column) takes on buffers that are
  /// not registered: one-shot; from 3 ranks two-shot for a large all-reduce, the relay for a
  /// mid-sized broadcast or reduce and the chain above (2 ranks: the chain for a broadcast or
  /// reduce above 32 or 64 MiB) ("copy" with one rank, "p2p"
  /// for send/recv). With `registered`, on buffers that lie in registered buffers: where
  /// ranks/zero_copy_rules.hpp (or zeroCopyFromBytes) says, split for an all-reduce, all-gather
  /// or mid-sized broadcast and reduce, pull for a reduce-scatter.
  const char* algorithmFor(CollOp op, std::size_t bytes, bool registered = false) const;

  // Per-rank calls with NCCL's arguments and in-place rules (all-gather: send == recv + rank x
  // count; reduce-scatter: recv == send + rank x count). Every argument is checked before
  // anything is enqueued.
  Status allReduce(const void* send, void* recv, std::size_t count, DataType type, RedOp op, cudaStream_t stream);
  Status allGather(const void* send, void* recv, std::size_t count, DataType type, cudaStream_t stream);
  Status reduceScatter(const void* send, void* recv, std::size_t count, DataType type, RedOp op, cudaStream_t stream);
  Status broadcast(const void* send, void* recv, std::size_t count, DataType type, int root, cudaStream_t stream);
  /// Only the root's recv is written; others may pass null.
  Status reduce(const void* send, void* recv, std::size_t count, DataType type, RedOp op, int root,
                cudaStream_t stream);
  Status allToAll(const void* send, void* recv, std::size_t count, DataType type, cudaStream_t stream);
  /// Point to point: `count` elements to rank `peer`, which calls recv with this rank. Between
  /// groupStart() and groupEnd() sends and receives are collected and issued together, so a
  /// cycle of send+recv cannot deadlock.
  Status send(const void* buffer, std::size_t count, DataType type, int peer, cudaStream_t stream);
  Status recv(void* buffer, std::size_t count, DataType type, int peer, cudaStream_t stream);
  Status groupStart();
  Status groupEnd();

  /// Registers [ptr, ptr + bytes) (device memory of this rank's GPU: from cudaMalloc, shared
  /// as a CUDA IPC handle, or cuMem memory made with the POSIX file descriptor handle type, such
  /// as PyTorch's expandable segments and gpupeer_mem_alloc, shared as descriptors over a Unix
  /// socket; a stream-ordered pool's cannot be shared and is refused; several buffers of one
  /// allocation may be registered) so that collectives whose buffers lie
  /// in it may read and write it from the peers directly (see
  /// RankCommOptions::zeroCopyFromBytes). Collective, like ncclCommRegister: every rank
  /// registers its buffer of the same role in the same order, from the host, outside stream
  /// capture; it blocks until every rank has (bounded by the timeout), and fails on every rank
  /// if one rank's buffer cannot be shared. Which way a call goes is decided when it is made,
  /// or captured: a graph captured before its buffers were registered keeps going through the
  /// scratch; one captured after reads the buffers directly and must not run after they were
  /// deregistered (reported as kInvalidArgument by checkError, not a fault).
  Status registerBuffer(void* ptr, std::size_t bytes);
  /// Undoes registerBuffer(ptr) (the same pointer); collective, in the same order on every
  /// rank, after every operation that uses the buffer has completed on every rank.
  Status deregisterBuffer(void* ptr);
  /// How the peers reach the live registration that starts at `ptr`: "cuda-ipc" (a CUDA IPC
  /// handle), "cumem-fd" (cuMem POSIX file descriptors over a Unix socket), "same-process" (every
  /// rank a thread of this process: the pointer itself), "none" (one rank); null where no live
  /// registration starts there.
  const char* registrationMechanism(const void* ptr) const;

  /// After synchronising the stream: kTimeout naming the rank (pid, GPU, bus id) that did not
  /// arrive within the bound, kInvalidArgument naming a rank whose collective call differed
  /// from this rank's and both calls, else ok. Once an operation failed the communicator
  /// refuses further work.
  Status checkError();
  /// What checkError would return, without waiting for any stream: for a watchdog thread
  /// (NCCL's ncclCommGetAsyncError). Any thread; the answer is not kept.
  Status pollError() const;
  /// Makes every wait of this communicator give up now (from any thread); later calls fail.
  void abort();

  struct Impl;

 private:
  explicit RankCommunicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpupeer
