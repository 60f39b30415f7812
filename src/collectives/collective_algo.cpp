#include "gpupeer/collective_algo.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace gpupeer {

const char* collAlgoName(CollAlgo a) {
  switch (a) {
    case CollAlgo::kOneShot: return "oneshot";
    case CollAlgo::kTwoShot: return "twoshot";
    case CollAlgo::kRing: return "ring";
    case CollAlgo::kCopyEngine: return "ce";
    case CollAlgo::kPull: return "pull";
    case CollAlgo::kSplit: return "split";
    case CollAlgo::kChain: return "chain";
    case CollAlgo::kRelay: return "relay";
  }
  return "?";
}

Result<CollAlgo> parseCollAlgo(const std::string& text) {
  std::string key;
  for (char c : text)
    if (c != '-' && c != '_') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (key == "oneshot") return CollAlgo::kOneShot;
  if (key == "twoshot") return CollAlgo::kTwoShot;
  if (key == "ring") return CollAlgo::kRing;
  if (key == "ce" || key == "copyengine") return CollAlgo::kCopyEngine;
  if (key == "pull") return CollAlgo::kPull;
  if (key == "split") return CollAlgo::kSplit;
  if (key == "chain") return CollAlgo::kChain;
  if (key == "relay") return CollAlgo::kRelay;
  return GPUPEER_ERROR(
      ErrorCode::kInvalidArgument,
      fmt::format("unknown algorithm '{}': use oneshot, twoshot, pull, split, chain, relay, ring or ce", text));
}

// Pull reads the peers' inputs and reduces them as it reads.
bool pullSupports(CollOp op) { return collOpReduces(op); }

const std::vector<AlgoRule>& algorithmTable() {
  // A row's size is where the next row's algorithm measured faster, both forced in one call,
  // or where the algorithm's scratch ends; "(x)" names the row of algorithm x in
  // docs/collectives.md that gives the numbers and the log. Rows after a split, chain or pull
  // row serve what those cannot: pull in place, buffers that peers cannot map. Rows ending in
  // `true` serve ranks in other processes only, where one-shot, the relay and the chain all go
  // through the scratch (crossovers: the one-shot and relay rows' across-process figures).
  static const std::vector<AlgoRule> kTable = {
      {CollOp::kAllReduce, 2, 2, 0, CollAlgo::kOneShot},  // split and copy engines slower at every size (one-shot)
      {CollOp::kAllReduce, 3, kMaxCommRanks, 256u << 10, CollAlgo::kOneShot},  // two-shot from 512 KiB (two-shot)
      {CollOp::kAllReduce, 3, kMaxCommRanks, 1u << 20, CollAlgo::kTwoShot},    // split from 2 MiB (split)
      {CollOp::kAllReduce, 3, kMaxCommRanks, 8u << 20, CollAlgo::kSplit},      // two-shot from 16 MiB (two-shot)
      {CollOp::kAllReduce, 3, kMaxCommRanks, 0, CollAlgo::kTwoShot},           // 2(n-1)/n per port (two-shot)
      {CollOp::kReduceScatter, 2, 2, 0, CollAlgo::kOneShot},  // pull and copy engines slower at every size (one-shot)
      {CollOp::kReduceScatter, 3, kMaxCommRanks, 256u << 20, CollAlgo::kOneShot},  // split above (one-shot)
      {CollOp::kReduceScatter, 3, kMaxCommRanks, 0, CollAlgo::kSplit},             // (split)
      {CollOp::kReduceScatter, 3, kMaxCommRanks, 0, CollAlgo::kOneShot},           // where split cannot serve
      {CollOp::kReduce, 2, 2, 8u << 20, CollAlgo::kOneShot},                       // pull above (pull)
      {CollOp::kReduce, 2, 2, 32u << 20, CollAlgo::kOneShot, true},         // across processes: chain above (one-shot)
      {CollOp::kReduce, 2, 2, 0, CollAlgo::kChain, true},                   // across processes (chain)
      {CollOp::kReduce, 2, 2, 0, CollAlgo::kPull},                          // copy engines slower (pull)
      {CollOp::kReduce, 2, 2, 32u << 20, CollAlgo::kOneShot},               // where pull cannot serve
      {CollOp::kReduce, 3, kMaxCommRanks, 512u << 10, CollAlgo::kOneShot},  // split from 1 MiB (split)
      {CollOp::kReduce, 3, 3, 32u << 20, CollAlgo::kRelay, true},           // chain from 64 MiB (relay)
      {CollOp::kReduce, 4, kMaxCommRanks, 1u << 20, CollAlgo::kOneShot, true},  // across processes: relay above
      {CollOp::kReduce, 4, kMaxCommRanks, 32u << 20, CollAlgo::kRelay, true},   // chain from 64 MiB (relay)
      {CollOp::kReduce, 3, kMaxCommRanks, 64u << 20, CollAlgo::kSplit},         // chain from 128 MiB (chain)
      {CollOp::kReduce, 3, kMaxCommRanks, 0, CollAlgo::kChain},                 // (chain)
      {CollOp::kReduce, 3, kMaxCommRanks, 16u << 20, CollAlgo::kOneShot},       // unmapped buffers: ring above (ring)
      {CollOp::kReduce, 3, kMaxCommRanks, 0, CollAlgo::kRing},                  // (ring)
      {CollOp::kAllGather, 2, 2, 16u << 20, CollAlgo::kOneShot},                // the one-shot slot (copy engines)
      {CollOp::kAllGather, 3, kMaxCommRanks, 2u << 20, CollAlgo::kOneShot},     // split above (split)
      {CollOp::kAllGather, 3, kMaxCommRanks, 128u << 20, CollAlgo::kSplit},     // copy engines above (copy engines)
      {CollOp::kAllGather, 3, kMaxCommRanks, 16u << 20, CollAlgo::kOneShot},    // unmapped buffers (copy engines)
      {CollOp::kBroadcast, 2, 2, 16u << 20, CollAlgo::kOneShot},                // the one-shot slot (copy engines)
      {CollOp::kBroadcast, 2, 2, 32u << 20, CollAlgo::kOneShot, true},  // across processes: chain above (one-shot)
      {CollOp::kBroadcast, 2, 2, 0, CollAlgo::kChain, true},            // across processes (chain)
      {CollOp::kBroadcast, 3, kMaxCommRanks, 256u << 10, CollAlgo::kOneShot},      // split from 512 KiB (split)
      {CollOp::kBroadcast, 3, 3, 512u << 10, CollAlgo::kOneShot, true},            // across processes: relay above
      {CollOp::kBroadcast, 3, 3, 32u << 20, CollAlgo::kRelay, true},               // chain from 64 MiB (relay)
      {CollOp::kBroadcast, 4, kMaxCommRanks, 1u << 20, CollAlgo::kOneShot, true},  // across processes: relay above
      {CollOp::kBroadcast, 4, kMaxCommRanks, 64u << 20, CollAlgo::kRelay, true},   // chain from 128 MiB (relay)
      {CollOp::kBroadcast, 3, kMaxCommRanks, 128u << 20, CollAlgo::kSplit},        // chain from 256 MiB (chain)
      {CollOp::kBroadcast, 3, kMaxCommRanks, 0, CollAlgo::kChain},                 // (chain)
      {CollOp::kBroadcast, 3, kMaxCommRanks, 16u << 20, CollAlgo::kOneShot},  // unmapped buffers: ring above (ring)
      {CollOp::kBroadcast, 3, kMaxCommRanks, 0, CollAlgo::kRing},             // (ring)
      {CollOp::kAllToAll, 2, 2, 8u << 20, CollAlgo::kOneShot},                // copy engines above (copy engines)
      {CollOp::kAllToAll, 3, kMaxCommRanks, 16u << 20, CollAlgo::kOneShot},   // copy engines above (copy engines)
      {CollOp::kSendRecv, 2, 2, 16u << 20, CollAlgo::kOneShot},               // the one-shot slot (copy engines)
      {CollOp::kSendRecv, 3, kMaxCommRanks, 32u << 20, CollAlgo::kOneShot},   // copy engines from 64 MiB (copy engines)
  };
  return kTable;
}

namespace {

// The operations a forced algorithm is limited to, for the error; null where it serves `op`.
const char* onlyFor(CollAlgo algo, CollOp op) {
  if (algo == CollAlgo::kTwoShot && op != CollOp::kAllReduce) return "all_reduce only";
  if (algo == CollAlgo::kPull && !pullSupports(op)) return "all_reduce, reduce_scatter and reduce";
  if ((algo == CollAlgo::kChain || algo == CollAlgo::kRelay) && op != CollOp::kBroadcast && op != CollOp::kReduce)
    return "broadcast and reduce";
  if (algo == CollAlgo::kSplit && !splitSupports(op))
    return "all_reduce, reduce_scatter, all_gather, broadcast and reduce";
  if (algo == CollAlgo::kRing && !ringSupports(op))
    return "all_reduce, all_gather, reduce_scatter, broadcast, reduce and sendrecv";
  return nullptr;
}

}  // namespace

bool ringSupports(CollOp op) { return op != CollOp::kAllToAll; }

bool splitSupports(CollOp op) { return op != CollOp::kAllToAll && op != CollOp::kSendRecv; }

namespace {

// Whether `rule` is a row for `op` of `bytes` on `ranks` GPUs.
bool covers(const AlgoRule& rule, CollOp op, std::size_t bytes, int ranks) {
  return rule.op == op && ranks >= rule.minRanks && ranks <= rule.maxRanks &&
         (rule.upToBytes == 0 || bytes <= rule.upToBytes);
}

}  // namespace

Result<CollAlgo> chooseAlgorithm(CollOp op, std::size_t bytes, int ranks, bool p2p, const std::string& override,
                                 const std::vector<AlgoRule>& table, bool pullAllowed, bool ringP2p, bool peersMapped,
                                 bool hostKnowsPeers) {
  if (!hostKnowsPeers) {
    // Only the scratch, mapped at start-up, joins the ranks: their buffers are reached by
    // nothing else (registered buffers take their own path before the table is asked). The
    // chain passes its steps through the next rank's scratch then. The copy engines can copy
    // each rank's input into its peers' scratch for the reducing operations (their copying
    // ones write the receivers' buffers, which no rank can reach), but only where asked: with
    // the default slots their chunks are a quarter of one-shot's pieces, and on 2x H200 a
    // 256 MiB all-reduce took 1,027 us in graphs (with 64 MiB slots 824) against the one-shot
    // kernel's 769.4, which carries all of a message's pieces in one kernel
    // (docs/multi-process.md).
    auto kernelThroughScratch = [&](CollAlgo algo) {
      return (algo == CollAlgo::kOneShot || algo == CollAlgo::kTwoShot || algo == CollAlgo::kChain ||
              algo == CollAlgo::kRelay) &&
             onlyFor(algo, op) == nullptr;
    };
    if (!override.empty()) {
      Result<CollAlgo> parsed = parseCollAlgo(override);
      if (!parsed.isOk()) return parsed.status();
      if (kernelThroughScratch(parsed.value()) || (parsed.value() == CollAlgo::kCopyEngine && collOpReduces(op)))
        return parsed.value();
    }
    for (const AlgoRule& rule : table)
      if (covers(rule, op, bytes, ranks) && kernelThroughScratch(rule.algo)) return rule.algo;
    return CollAlgo::kOneShot;
  }
  // Send/recv is a shift to the next rank: the ring's one step, which the copy engines take.
  auto ringFor = [op] { return op == CollOp::kSendRecv ? CollAlgo::kCopyEngine : CollAlgo::kRing; };
  if (!override.empty()) {
    Result<CollAlgo> parsed = parseCollAlgo(override);
    if (!parsed.isOk()) return parsed.status();
    CollAlgo forced = parsed.value();
    if (const char* only = onlyFor(forced, op))
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("GPUPEER_ALGO={} applies to {}, not {}",
                                                                    collAlgoName(forced), only, collOpName(op)));
    // The ring and the copy engines only copy and reduce locally: without P2P, CUDA stages
    // their copies through host memory.
    if (forced == CollAlgo::kRing) return ringFor();
    if (!p2p && forced != CollAlgo::kCopyEngine)
      return GPUPEER_ERROR(ErrorCode::kUnsupported,
                           fmt::format("GPUPEER_ALGO={}: needs P2P between all GPUs, which is not available; only ce "
                                       "and ring (copies staged through host memory where a pair has no P2P) work",
                                       collAlgoName(forced)));
    const bool mapsPeers = forced == CollAlgo::kSplit || forced == CollAlgo::kChain;
    if ((forced != CollAlgo::kPull || pullAllowed) && (!mapsPeers || peersMapped)) return forced;
  }
  // Without P2P between some pairs but with it from every rank to the next, the ring keeps to
  // P2P links; the copy engines would stage some copies through host memory.
  if (!p2p) return ringP2p && ringSupports(op) ? ringFor() : CollAlgo::kCopyEngine;
  for (const AlgoRule& rule : table)
    if (covers(rule, op, bytes, ranks) && !rule.acrossProcessesOnly && (pullAllowed || rule.algo != CollAlgo::kPull) &&
        (peersMapped || (rule.algo != CollAlgo::kSplit && rule.algo != CollAlgo::kChain)))
      return rule.algo;
  return CollAlgo::kCopyEngine;
}

}  // namespace gpupeer
