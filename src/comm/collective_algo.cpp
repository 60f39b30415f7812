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
  return GPUPEER_ERROR(
      ErrorCode::kInvalidArgument,
      fmt::format("unknown algorithm '{}': use oneshot, twoshot, pull, split, chain, ring or ce", text));
}

bool pullSupports(CollOp op) {
  return op == CollOp::kAllReduce || op == CollOp::kReduceScatter || op == CollOp::kReduce;
}

const std::vector<AlgoRule>& algorithmTable() {
  // docs/collectives.md gives each algorithm's rows, why, and the crossover with its log. Below,
  // the measurements behind the rows, oldest first; the logs of those no longer in the tree are
  // in git at 176d235 (git show 176d235:bench/results/FOLDER/README.md).
  //
  // Crossovers measured on 2x H200 NV18 by forcing each algorithm over 128 KiB..512 MiB
  // (each forced by GPUPEER_ALGO, 176d235:bench/results/2026-11-22-h200x2-s3-tuning): the
  // one-shot kernel's latency wins small (in lines up to 1 MiB), pulling straight from the
  // peers' buffers wins in the middle (SM loads keep ~300-360 GB/s per direction, no scratch
  // pass), the copy engines' ~380 GB/s win large although each crossing between GPUs of that
  // algorithm costs ~20 us. Rows are searched in order: where pull cannot serve a request
  // (in-place all-reduce, buffers not from cudaMalloc) the rows after it decide.
  //
  // From 3 GPUs on (measured on 4x H200 behind NVSwitches, every algorithm forced, bench/results/h200x4/
  // 2026-11-22-first-table): one-shot, pull and the copy-engine all-reduce each move
  // n-1 times the message out of (or into) every GPU, against 2(n-1)/n for reduce-scatter +
  // all-gather, so all-reduce goes two-shot above 256 KiB (graph: 10.6 against 11.5 us at
  // 256 KiB, 14.9 against 14.4 at 512 KiB), its halves choosing by these rows. Reduce-scatter
  // by the one-shot kernel won at every size out of place (256 MiB: 740 us; copy engines 887,
  // pull 2338, though pull took 661 in place);
  // all-gather and alltoall leave it for the copy engines above 16 MiB (all-gather at 64 MiB:
  // 164 against 172 us). Broadcast and reduce go down the ring above 16 MiB (176d235:bench/results/
  // 2026-11-22-h200x4-s5-ring): the copy engines pass the whole message through the root's one
  // port once per peer (4 GPUs, 512 MiB: ring 1725 and 1690 us, copy engines 4090 and 4109).
  //
  // Measured in 176d235:bench/results/2026-11-22-h200x4-s6 (4x H200, 256 KiB..512 MiB, every
  // algorithm forced beside the table's choice and NCCL): split, where every part's owner reads
  // it from every rank and writes it to every rank that needs it in one kernel, took the middle
  // from 2 MiB (all-reduce at 8 MiB: 52.3 us against two-shot's 59.3; broadcast at 32 MiB
  // 145.4 against the ring's 184.0; reduce 162.9 against 214.1; all-gather 79.1 against 99.0);
  // the chain kernel (SM stores from rank to rank, a flag per step) took broadcast and reduce
  // from 128 MiB (512 MiB: 1556 and 1609 us against the ring's 1726 and 1688); reduce-scatter
  // by split from 128 MiB (512 MiB: 1360 against one-shot's 1490), which two-shot's half then
  // takes too. On 2 GPUs split replaces pull for all-reduce (same speed out of place, 33.8
  // against 35.0 us at 8 MiB, and it serves in place, where pull gave way to the one-shot
  // kernel: 107.4 against 121.5 us at 32 MiB).
  // With a block per 16 KiB instead of 64, split takes the 2-GPU all-reduce of
  // 2 MiB from the one-shot kernel (2x H200: 13.2 against 14.9 us in graphs, 14.1 against 15.7
  // eager, 176d235:bench/results/2026-11-22-h200x2-s7/4-final; 1 MiB stays one-shot, 9.8 against 10.7
  // in graphs on GPUs 0-1 of 4x H200, 176d235:bench/results/2026-11-22-h200x4-s7/2-pull-grid).
  // Pull, whose blocks now take 64 KiB tiles in turn where each owns 512 KiB or more, keeps
  // the 2-GPU reduce at every size from 8 MiB (128 / 256 / 512 MiB: 371.8 / 730.7 / 1447.7 us
  // against the copy engines' 751.1 / 1462.3 at 256 / 512 MiB and NCCL's 377.9 / 737.8 / 1455.8;
  // 176d235:bench/results/2026-11-22-h200x2-s7).
  // Measured in 176d235:bench/results/2026-11-22-h200x4-s11 (4x H200, graphs, each algorithm forced in
  // one call): two-shot takes the all-reduce from 16 MiB (16 / 32 / 64 MiB: 91.7 / 171.7 / 317.9
  // us against split's 107.0 / 189.4 / 345.4; 8 MiB stays split, 51.6 against 53.6), and the
  // one-shot kernel send/recv up to 32 MiB (120.8 us against the copy engines' 160.8, which take
  // 151-161 us for anything from 8 to 32 MiB in a graph on 4 GPUs; 64 MiB: 240.6 against 215.9).
  // Split reduce and broadcast in their new grids (comm/pull_plan.hpp) take over from the
  // one-shot kernel above 512 and 256 KiB (reduce of 1 / 2 MiB: 12.9 / 17.7 us against 17.7 /
  // 24.5; broadcast of 512 KiB: 9.95 against 10.55; 256 KiB stays one-shot, 6.1 against 8.9).
  // Broadcast in 2 MiB blocks keeps split to 128 MiB (433.4 us against the chain's 443.9).
  // Measured in 176d235:bench/results/2026-11-22-h200x2-s12 (2x H200, graphs, run 5): in 128-byte
  // lines (comm/line128_rules.hpp) the one-shot kernel takes the 2-GPU all-reduce and
  // reduce-scatter to 16 MiB, a piece of one slot (all-reduce of 4 / 8 / 16 MiB: 15.8 / 28.2 /
  // 53.7 us against split's 16.2 / 31.7-31.9 / 57.5-57.6; 32 MiB in one piece 103.4 against
  // 105.4, in two pieces ~107; reduce-scatter of 4 / 16 MiB 9.9 / 30.1 in 132 blocks against
  // 13.7 / 32.9 by the table's one-shot kernel and pull, run 1).
  // Measured in bench/results/h200x4/2026-11-22-reduce-scatter (graphs, the table with split
  // from 128 MiB and this one alternating in one call): the one-shot kernel keeps the 4-GPU reduce-scatter to
  // 256 MiB (128 / 256 MiB: 327.2-327.8 / 652.7 us against split's 353.3-354.3 / 680.9-681.5;
  // NCCL 343.4 / 660.0), and with it the two-shot all-reduce's first half (622.5-622.7 /
  // 1212.0-1212.4 against 648.1-648.3 / 1226.4-1229.6; NCCL 611.6 at 128 MiB).
  // Measured in bench/results/h200x2/2026-11-22-large-messages (2x H200, graphs, every
  // algorithm forced, two passes): the one-shot kernel takes the reduce-scatter to 64 MiB (32 /
  // 64 MiB: 54.2-54.3 / 107.9-108.0 us against pull's 58.3-58.4 / 108.5-108.7). Two-shot by
  // copy engines was faster than their one pass for the all-reduce of 256 / 512 MiB in graphs
  // (756.3-757.0 / 1462.7-1463.2 against 764.3-765.0 / 1492.0-1494.0) but eagerly took 1745.7
  // at 512 MiB (NCCL 1700.1; one pass 1493.5): not taken
  // (176d235:bench/results/2026-11-22-h200x2-s14/7-twoshot and 4-closing).
  // Rows after a split or chain row serve buffers that peers cannot map (the ring's rows,
  // 176d235:bench/results/2026-11-22-h200x4-s5-ring).
  static const std::vector<AlgoRule> kTable = {
      {CollOp::kAllReduce, 2, 2, 16u << 20, CollAlgo::kOneShot},
      {CollOp::kAllReduce, 2, 2, 64u << 20, CollAlgo::kSplit},
      {CollOp::kAllReduce, 3, kMaxCommRanks, 256u << 10, CollAlgo::kOneShot},
      {CollOp::kAllReduce, 3, kMaxCommRanks, 1u << 20, CollAlgo::kTwoShot},
      {CollOp::kAllReduce, 3, kMaxCommRanks, 8u << 20, CollAlgo::kSplit},
      {CollOp::kAllReduce, 3, kMaxCommRanks, 0, CollAlgo::kTwoShot},
      {CollOp::kReduceScatter, 2, 2, 64u << 20, CollAlgo::kOneShot},
      {CollOp::kReduceScatter, 2, 2, 128u << 20, CollAlgo::kPull},
      {CollOp::kReduceScatter, 3, kMaxCommRanks, 256u << 20, CollAlgo::kOneShot},
      {CollOp::kReduceScatter, 3, kMaxCommRanks, 0, CollAlgo::kSplit},
      {CollOp::kReduceScatter, 3, kMaxCommRanks, 0, CollAlgo::kOneShot},
      {CollOp::kReduce, 2, 2, 8u << 20, CollAlgo::kOneShot},
      {CollOp::kReduce, 2, 2, 0, CollAlgo::kPull},
      {CollOp::kReduce, 2, 2, 32u << 20, CollAlgo::kOneShot},
      {CollOp::kReduce, 3, kMaxCommRanks, 512u << 10, CollAlgo::kOneShot},
      {CollOp::kReduce, 3, kMaxCommRanks, 64u << 20, CollAlgo::kSplit},
      {CollOp::kReduce, 3, kMaxCommRanks, 0, CollAlgo::kChain},
      {CollOp::kReduce, 3, kMaxCommRanks, 16u << 20, CollAlgo::kOneShot},
      {CollOp::kReduce, 3, kMaxCommRanks, 0, CollAlgo::kRing},
      {CollOp::kAllGather, 2, 2, 16u << 20, CollAlgo::kOneShot},
      {CollOp::kAllGather, 3, kMaxCommRanks, 2u << 20, CollAlgo::kOneShot},
      {CollOp::kAllGather, 3, kMaxCommRanks, 128u << 20, CollAlgo::kSplit},
      {CollOp::kAllGather, 3, kMaxCommRanks, 16u << 20, CollAlgo::kOneShot},
      {CollOp::kBroadcast, 2, 2, 16u << 20, CollAlgo::kOneShot},
      {CollOp::kBroadcast, 3, kMaxCommRanks, 256u << 10, CollAlgo::kOneShot},
      {CollOp::kBroadcast, 3, kMaxCommRanks, 128u << 20, CollAlgo::kSplit},
      {CollOp::kBroadcast, 3, kMaxCommRanks, 0, CollAlgo::kChain},
      {CollOp::kBroadcast, 3, kMaxCommRanks, 16u << 20, CollAlgo::kOneShot},
      {CollOp::kBroadcast, 3, kMaxCommRanks, 0, CollAlgo::kRing},
      {CollOp::kAllToAll, 2, 2, 8u << 20, CollAlgo::kOneShot},
      {CollOp::kAllToAll, 3, kMaxCommRanks, 16u << 20, CollAlgo::kOneShot},
      {CollOp::kSendRecv, 2, 2, 16u << 20, CollAlgo::kOneShot},
      {CollOp::kSendRecv, 3, kMaxCommRanks, 32u << 20, CollAlgo::kOneShot},
  };
  return kTable;
}

namespace {

// The operations a forced algorithm is limited to, for the error; null where it serves `op`.
const char* onlyFor(CollAlgo algo, CollOp op) {
  if (algo == CollAlgo::kTwoShot && op != CollOp::kAllReduce) return "all_reduce only";
  if (algo == CollAlgo::kPull && !pullSupports(op)) return "all_reduce, reduce_scatter and reduce";
  if (algo == CollAlgo::kChain && op != CollOp::kBroadcast && op != CollOp::kReduce) return "broadcast and reduce";
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
    // chain passes its steps through the next rank's scratch then.
    for (const AlgoRule& rule : table)
      if (covers(rule, op, bytes, ranks) &&
          (rule.algo == CollAlgo::kOneShot || rule.algo == CollAlgo::kTwoShot || rule.algo == CollAlgo::kChain))
        return rule.algo;
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
    if (covers(rule, op, bytes, ranks) && (pullAllowed || rule.algo != CollAlgo::kPull) &&
        (peersMapped || (rule.algo != CollAlgo::kSplit && rule.algo != CollAlgo::kChain)))
      return rule.algo;
  return CollAlgo::kCopyEngine;
}

}  // namespace gpupeer
