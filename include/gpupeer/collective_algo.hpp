#pragma once
/// \file collective_algo.hpp
/// Which algorithm a collective uses, chosen by size, rank count and whether P2P works, from a
/// table of measured crossover points kept as data (`algorithmTable()`), and overridable with
/// GPUPEER_ALGO. Pure: tested without a GPU; any thread.

#include <cstddef>
#include <string>
#include <vector>

#include "gpupeer/collective_types.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

/// The ways gpupeer can carry out a collective.
enum class CollAlgo {
  kOneShot,  ///< one SM kernel: push to peers' scratch, flag barrier, finish locally
  kTwoShot,  ///< all-reduce as reduce-scatter then all-gather (each by its own choice)
  /// Copy engines carry every byte from rank r to r+1 only, in chunks that follow each other
  /// around (ring_path.cpp): P2P needed only between neighbours, each GPU's ports carry the
  /// message once (broadcast and reduce as a chain from or to the root). Not alltoall;
  /// send/recv is already a shift to the next rank (copy engines).
  kRing,
  kCopyEngine,  ///< copy engines move the data, a local kernel reduces, pipelined in chunks
  /// One SM kernel per rank that reads every peer's input straight from the peer's buffer
  /// and reduces as it reads (all-reduce, reduce-scatter, reduce): no scratch, no copy, a
  /// barrier before (inputs ready) and after (nobody still reads). Needs buffers from
  /// cudaMalloc (peer access maps them) and, for all-reduce, separate send and receive
  /// buffers (a rank's output would overwrite the input its peers are reading).
  kPull,
  /// The pull kernel with the message split into parts (collectives/pull_plan.hpp): each part's owner
  /// reads it from every rank that holds it and writes the result into every rank that needs
  /// it, so each GPU's port carries each byte about once in each direction (all-reduce,
  /// reduce-scatter, all-gather, broadcast, reduce). In place works: a unit is read and then
  /// written by its owner only. Needs buffers from cudaMalloc.
  kSplit,
  /// Broadcast and reduce by one SM kernel per rank along a chain (broadcast from the root
  /// through root + 1, ...; reduce through root + 1, ... to the root): each rank stores every
  /// step into the next rank's output (broadcast) or scratch (reduce, its partial sum) and
  /// raises a flag there, and goes on with a step once its own flag for it has come (NCCL's
  /// ring, kept to one kernel). Needs buffers from cudaMalloc.
  kChain,
  /// Broadcast and reduce through the scratch with the message cut into a part per rank other
  /// than the root: the root sends each rank its part, which that rank passes on to the others
  /// (broadcast); every rank sends each part of its input to the part's rank, which reduces it
  /// and sends the result to the root (reduce). Each port carries about the message once, as
  /// split's do, for ranks that reach each other through the scratch alone.
  kRelay,
};
/// "oneshot", "twoshot", "ring", "ce", "pull", "split", "chain", "relay"
const char* collAlgoName(CollAlgo a);
/// "oneshot", "one-shot", "twoshot", "ring", "ce", "copy-engine", "pull", "split", "chain", "relay".
Result<CollAlgo> parseCollAlgo(const std::string& text);

/// One row: for `op` on `minRanks`..`maxRanks` GPUs, messages of at most `upToBytes` per
/// rank (the size column of the table) use `algo`. Rows are searched in order; the first
/// match wins. upToBytes == 0 means no upper bound.
struct AlgoRule {
  CollOp op;               ///< the operation this row is for
  int minRanks, maxRanks;  ///< GPU counts it covers, inclusive
  std::size_t upToBytes;   ///< largest size column it covers; 0: no bound
  CollAlgo algo;           ///< what those messages use
  /// A row for ranks in other processes only: the scratch alone joins them there, and its
  /// algorithms cross over at other sizes than in one process. One process skips it.
  bool acrossProcessesOnly = false;
};

/// The built-in table, from measured crossovers (docs/collectives.md gives each row's reason and log).
const std::vector<AlgoRule>& algorithmTable();

/// The algorithm for `op` moving `bytes` (nccl-tests' size column) on `ranks` GPUs; `p2p`:
/// between every pair. Without it only copies and local reductions work (CUDA stages a copy
/// between GPUs without P2P through host memory): the ring where `ringP2p` (P2P from every
/// rank to the next and back), else the copy engines. `override` is GPUPEER_ALGO's value
/// ("" = none): honoured where it can work, else kInvalidArgument or kUnsupported saying why
/// (two-shot is all-reduce only; pull is for all-reduce, reduce-scatter and reduce; the ring is
/// not for alltoall, and is the copy engines for send/recv; one-shot, two-shot and pull need
/// P2P; split is not for alltoall and send/recv; chain is for broadcast and reduce). `pullAllowed` false (a request
/// pull cannot serve: see kPull) skips the pull rows and a pull override, `peersMapped` false (buffers not from
/// cudaMalloc) the split and chain rows and overrides: the next row that matches decides.
/// `hostKnowsPeers` false (ranks in other processes: the host holds only its own rank's
/// buffers) leaves the algorithms that work through the ranks' scratch alone: one-shot,
/// two-shot and the chain (steps through the next rank's scratch) from the rows (the
/// acrossProcessesOnly rows among them), the others' rows skipped and one-shot taking what no
/// row covers; `override` applies where it names one of them, or for all-reduce,
/// reduce-scatter and reduce the copy engines (each rank's input copied into its peers'
/// scratch, slower with the default slots).
Result<CollAlgo> chooseAlgorithm(CollOp op, std::size_t bytes, int ranks, bool p2p, const std::string& override,
                                 const std::vector<AlgoRule>& table = algorithmTable(), bool pullAllowed = true,
                                 bool ringP2p = false, bool peersMapped = true, bool hostKnowsPeers = true);

/// Whether kPull can do `op` at all (all-reduce, reduce-scatter, reduce).
bool pullSupports(CollOp op);
/// Whether kSplit can do `op` (all-reduce, reduce-scatter, all-gather, broadcast, reduce).
bool splitSupports(CollOp op);
/// Whether kRing can do `op` (all but alltoall).
bool ringSupports(CollOp op);

}  // namespace gpupeer
