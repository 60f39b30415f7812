// The algorithm choice: the built-in table's crossovers, the override's rules, and what
// happens without P2P.
#include "gpupeer/collective_algo.hpp"

#include <gtest/gtest.h>

namespace gpupeer {
namespace {

TEST(CollectiveAlgo, NamesRoundTripAndUnknownNamesAreRefused) {
  for (CollAlgo a : {CollAlgo::kOneShot, CollAlgo::kTwoShot, CollAlgo::kRing, CollAlgo::kCopyEngine, CollAlgo::kPull,
                     CollAlgo::kSplit, CollAlgo::kChain, CollAlgo::kRelay})
    EXPECT_EQ(parseCollAlgo(collAlgoName(a)).value(), a);
  EXPECT_EQ(parseCollAlgo("One-Shot").value(), CollAlgo::kOneShot);
  EXPECT_EQ(parseCollAlgo("copy_engine").value(), CollAlgo::kCopyEngine);
  Status bad = parseCollAlgo("fastest").status();
  EXPECT_EQ(bad.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("fastest"), std::string::npos);
}

TEST(CollectiveAlgo, TheTableCoversEveryOperationAndWhatTakesLargeMessages) {
  for (CollOp op : {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kBroadcast, CollOp::kReduce,
                    CollOp::kAllToAll, CollOp::kSendRecv})
    for (int ranks = 2; ranks <= kMaxCommRanks; ++ranks) {
      SCOPED_TRACE(::testing::Message() << collOpName(op) << " on " << ranks);
      EXPECT_EQ(chooseAlgorithm(op, 8, ranks, true, "").value(), CollAlgo::kOneShot);
      // 2 GPUs: the one-shot kernel reduces at every size. From 3, a large all-reduce is a
      // reduce-scatter and an all-gather, a reduce-scatter is split, and broadcast and reduce go
      // down the chain kernel.
      CollAlgo large = CollAlgo::kCopyEngine;
      if (ranks == 2 && (op == CollOp::kAllReduce || op == CollOp::kReduceScatter)) large = CollAlgo::kOneShot;
      if (ranks > 2 && op == CollOp::kAllReduce) large = CollAlgo::kTwoShot;
      if (ranks > 2 && op == CollOp::kReduceScatter) large = CollAlgo::kSplit;
      if (ranks > 2 && (op == CollOp::kBroadcast || op == CollOp::kReduce)) large = CollAlgo::kChain;
      // 2 GPUs: the pull kernel reduces at every size from 8 MiB, the copy engines where it cannot.
      if (ranks == 2 && op == CollOp::kReduce) large = CollAlgo::kPull;
      EXPECT_EQ(chooseAlgorithm(op, 1u << 30, ranks, true, "").value(), large);
      if (ranks == 2 && op == CollOp::kReduce) {
        EXPECT_EQ(chooseAlgorithm(op, 1u << 30, ranks, true, "", algorithmTable(), false).value(),
                  CollAlgo::kCopyEngine);
        large = CollAlgo::kCopyEngine;
      }
      // Buffers peers cannot map: what took large messages before split and chain.
      if (ranks > 2 && op == CollOp::kReduceScatter) large = CollAlgo::kOneShot;
      if (ranks > 2 && (op == CollOp::kBroadcast || op == CollOp::kReduce)) large = CollAlgo::kRing;
      EXPECT_EQ(chooseAlgorithm(op, 1u << 30, ranks, true, "", algorithmTable(), false, false, false).value(), large);
    }
  // The rows are searched in order; a size exactly at a bound belongs to that row (a row
  // after a pull row is reached when pull cannot serve the request, after a split or chain row
  // when peers cannot map the buffers).
  const std::vector<AlgoRule>& table = algorithmTable();
  for (std::size_t i = 0; i < table.size(); ++i) {
    const AlgoRule& rule = table[i];
    if (!rule.upToBytes) continue;
    const bool pullAllowed = rule.algo == CollAlgo::kPull;
    bool afterMapped = false;
    for (std::size_t j = 0; j < i; ++j)
      afterMapped = afterMapped || (table[j].op == rule.op && table[j].minRanks == rule.minRanks &&
                                    (table[j].algo == CollAlgo::kSplit || table[j].algo == CollAlgo::kChain));
    const bool mapped = rule.algo == CollAlgo::kSplit || rule.algo == CollAlgo::kChain || !afterMapped;
    EXPECT_EQ(chooseAlgorithm(rule.op, rule.upToBytes, rule.minRanks, true, "", table, pullAllowed, false, mapped,
                              !rule.acrossProcessesOnly)
                  .value(),
              rule.algo)
        << "row " << i;
  }
  // 2 GPUs: the one-shot kernel keeps all-reduce and reduce-scatter at every size (128-byte lines
  // to 16 MiB, then slots of pieces in one kernel), mapped buffers or not.
  for (std::size_t bytes : {1u << 20, 16u << 20, (16u << 20) + 4, 64u << 20, 1u << 30})
    for (CollOp op : {CollOp::kAllReduce, CollOp::kReduceScatter})
      for (bool mapped : {true, false}) {
        SCOPED_TRACE(::testing::Message() << collOpName(op) << " of " << bytes << (mapped ? " mapped" : ""));
        EXPECT_EQ(chooseAlgorithm(op, bytes, 2, true, "", algorithmTable(), true, false, mapped).value(),
                  CollAlgo::kOneShot);
      }
  EXPECT_EQ(chooseAlgorithm(CollOp::kSendRecv, 16u << 20, 2, true, "").value(), CollAlgo::kOneShot);
  EXPECT_EQ(chooseAlgorithm(CollOp::kSendRecv, 32u << 20, 2, true, "").value(), CollAlgo::kCopyEngine);
  // Reduce keeps pull on 2 GPUs from 8 MiB.
  EXPECT_EQ(chooseAlgorithm(CollOp::kReduce, 64u << 20, 2, true, "").value(), CollAlgo::kPull);
  for (int ranks : {3, 4, 8}) {
    SCOPED_TRACE(ranks);
    EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 256u << 10, ranks, true, "").value(), CollAlgo::kOneShot);
    EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 512u << 10, ranks, true, "").value(), CollAlgo::kTwoShot);
    EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 2u << 20, ranks, true, "").value(), CollAlgo::kSplit);
    EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 8u << 20, ranks, true, "").value(), CollAlgo::kSplit);
    EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 16u << 20, ranks, true, "").value(), CollAlgo::kTwoShot);
    EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 128u << 20, ranks, true, "").value(), CollAlgo::kTwoShot);
    // Send/recv: the one-shot kernel up to 32 MiB from 3 GPUs (16 MiB on 2), then copy engines.
    EXPECT_EQ(chooseAlgorithm(CollOp::kSendRecv, 32u << 20, ranks, true, "").value(), CollAlgo::kOneShot);
    EXPECT_EQ(chooseAlgorithm(CollOp::kSendRecv, 64u << 20, ranks, true, "").value(), CollAlgo::kCopyEngine);
    EXPECT_EQ(
        chooseAlgorithm(CollOp::kAllReduce, 2u << 20, ranks, true, "", algorithmTable(), true, false, false).value(),
        CollAlgo::kTwoShot);
    // Reduce-scatter, and so two-shot's first half: the one-shot kernel to 256 MiB, then split.
    EXPECT_EQ(chooseAlgorithm(CollOp::kReduceScatter, 256u << 20, ranks, true, "").value(), CollAlgo::kOneShot);
    EXPECT_EQ(chooseAlgorithm(CollOp::kReduceScatter, 512u << 20, ranks, true, "").value(), CollAlgo::kSplit);
    EXPECT_EQ(chooseAlgorithm(CollOp::kAllGather, 2u << 20, ranks, true, "").value(), CollAlgo::kOneShot);
    EXPECT_EQ(chooseAlgorithm(CollOp::kAllGather, 4u << 20, ranks, true, "").value(), CollAlgo::kSplit);
    EXPECT_EQ(chooseAlgorithm(CollOp::kAllGather, 256u << 20, ranks, true, "").value(), CollAlgo::kCopyEngine);
    EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 256u << 10, ranks, true, "").value(), CollAlgo::kOneShot);
    EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 512u << 10, ranks, true, "").value(), CollAlgo::kSplit);
    EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 1u << 20, ranks, true, "").value(), CollAlgo::kSplit);
    EXPECT_EQ(chooseAlgorithm(CollOp::kReduce, 512u << 10, ranks, true, "").value(), CollAlgo::kOneShot);
    EXPECT_EQ(chooseAlgorithm(CollOp::kReduce, 1u << 20, ranks, true, "").value(), CollAlgo::kSplit);
    EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 128u << 20, ranks, true, "").value(), CollAlgo::kSplit);
    EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 256u << 20, ranks, true, "").value(), CollAlgo::kChain);
    EXPECT_EQ(chooseAlgorithm(CollOp::kReduce, 4u << 20, ranks, true, "").value(), CollAlgo::kSplit);
    EXPECT_EQ(chooseAlgorithm(CollOp::kReduce, 128u << 20, ranks, true, "").value(), CollAlgo::kChain);
  }
  EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 8, 2, true, "quick").status().code(), ErrorCode::kInvalidArgument);
}

TEST(CollectiveAlgo, PullServesReductionsOnlyAndStepsAsideWhereTheRequestForbidsIt) {
  EXPECT_EQ(chooseAlgorithm(CollOp::kReduce, 8, 2, true, "pull").value(), CollAlgo::kPull);
  EXPECT_EQ(chooseAlgorithm(CollOp::kReduceScatter, 8, 8, true, "pull").value(), CollAlgo::kPull);
  Status s = chooseAlgorithm(CollOp::kAllGather, 8, 2, true, "pull").status();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("all_gather"), std::string::npos);
  EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 8, 2, false, "pull").status().code(), ErrorCode::kUnsupported);
  // A request pull cannot serve (in-place all-reduce, buffers not from cudaMalloc): the
  // override and the table's pull rows give way to the next row that matches.
  const std::vector<AlgoRule> table = {{CollOp::kAllReduce, 2, 8, 1024, CollAlgo::kOneShot},
                                       {CollOp::kAllReduce, 2, 8, 0, CollAlgo::kPull},
                                       {CollOp::kAllReduce, 2, 8, 4096, CollAlgo::kOneShot}};
  EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 2000, 2, true, "", table, true).value(), CollAlgo::kPull);
  EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 2000, 2, true, "", table, false).value(), CollAlgo::kOneShot);
  EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 5000, 2, true, "", table, false).value(), CollAlgo::kCopyEngine);
  EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 500, 2, true, "pull", table, false).value(), CollAlgo::kOneShot);
  EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 500, 2, true, "pull", table, true).value(), CollAlgo::kPull);
}

TEST(CollectiveAlgo, SplitServesAllButAlltoallAndSendRecvOnMappedBuffersWithP2p) {
  for (CollOp op :
       {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kBroadcast, CollOp::kReduce}) {
    EXPECT_EQ(chooseAlgorithm(op, 8, 4, true, "split").value(), CollAlgo::kSplit) << collOpName(op);
    // Split writes peers' outputs where pull only reads: an in-place all-reduce is fine.
    EXPECT_EQ(chooseAlgorithm(op, 8, 4, true, "split", algorithmTable(), false).value(), CollAlgo::kSplit);
  }
  for (CollOp op : {CollOp::kAllToAll, CollOp::kSendRecv}) {
    Status s = chooseAlgorithm(op, 8, 4, true, "split").status();
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(s.message().find(collOpName(op)), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("broadcast"), std::string::npos) << s.message();
  }
  EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 8, 2, false, "split").status().code(), ErrorCode::kUnsupported);
  // Buffers peers cannot map: the override and the table's split rows give way.
  const std::vector<AlgoRule> table = {{CollOp::kBroadcast, 2, 8, 0, CollAlgo::kSplit}};
  EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 5000, 4, true, "", table).value(), CollAlgo::kSplit);
  EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 5000, 4, true, "", table, true, false, false).value(),
            CollAlgo::kCopyEngine);
  EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 5000, 4, true, "split", table, true, false, false).value(),
            CollAlgo::kCopyEngine);
}

TEST(CollectiveAlgo, ChainIsForBroadcastAndReduceOnMappedBuffersWithP2p) {
  EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 8, 4, true, "chain").value(), CollAlgo::kChain);
  EXPECT_EQ(chooseAlgorithm(CollOp::kReduce, 8, 4, true, "chain").value(), CollAlgo::kChain);
  for (CollOp op :
       {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kAllToAll, CollOp::kSendRecv}) {
    Status s = chooseAlgorithm(op, 8, 4, true, "chain").status();
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << collOpName(op);
    EXPECT_NE(s.message().find("broadcast and reduce"), std::string::npos) << s.message();
  }
  EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 8, 4, false, "chain").status().code(), ErrorCode::kUnsupported);
  const std::vector<AlgoRule> table = {{CollOp::kBroadcast, 2, 8, 0, CollAlgo::kChain}};
  EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 5000, 4, true, "", table).value(), CollAlgo::kChain);
  EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 5000, 4, true, "", table, true, false, false).value(),
            CollAlgo::kCopyEngine);
  EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 5000, 4, true, "chain", table, true, false, false).value(),
            CollAlgo::kCopyEngine);
}

TEST(CollectiveAlgo, RingServesAllButAlltoallAndLeavesSendRecvToTheCopyEngines) {
  for (CollOp op :
       {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kBroadcast, CollOp::kReduce})
    for (bool p2p : {true, false}) {
      EXPECT_TRUE(ringSupports(op));
      EXPECT_EQ(chooseAlgorithm(op, 1u << 30, 8, p2p, "ring").value(), CollAlgo::kRing) << collOpName(op);
    }
  EXPECT_EQ(chooseAlgorithm(CollOp::kSendRecv, 8, 4, true, "ring").value(), CollAlgo::kCopyEngine);
  Status s = chooseAlgorithm(CollOp::kAllToAll, 8, 4, true, "ring").status();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("alltoall"), std::string::npos) << s.toString();
  EXPECT_FALSE(ringSupports(CollOp::kAllToAll));
}

TEST(CollectiveAlgo, WithP2pOnlyBetweenNeighboursTheRingTakesWhatItCan) {
  // P2P from every rank to the next but not between every pair (e.g. PCIe switches that pair
  // GPUs, cabled bridges): the ring keeps to P2P links; alltoall needs every pair (copies
  // staged), send/recv goes to the next rank by copy engine.
  for (CollOp op :
       {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kBroadcast, CollOp::kReduce})
    for (std::size_t bytes : {std::size_t{8}, std::size_t{1} << 30})
      EXPECT_EQ(chooseAlgorithm(op, bytes, 4, false, "", algorithmTable(), true, true).value(), CollAlgo::kRing)
          << collOpName(op);
  EXPECT_EQ(chooseAlgorithm(CollOp::kAllToAll, 8, 4, false, "", algorithmTable(), true, true).value(),
            CollAlgo::kCopyEngine);
  EXPECT_EQ(chooseAlgorithm(CollOp::kSendRecv, 8, 4, false, "", algorithmTable(), true, true).value(),
            CollAlgo::kCopyEngine);
  // With P2P everywhere the table decides: the ring only for large broadcasts and reduces.
  for (const AlgoRule& rule : algorithmTable())
    if (rule.algo == CollAlgo::kRing) {
      EXPECT_TRUE(rule.op == CollOp::kBroadcast || rule.op == CollOp::kReduce) << collOpName(rule.op);
      EXPECT_GE(rule.minRanks, 3);
    }
  EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 8, 4, true, "", algorithmTable(), true, true).value(),
            CollAlgo::kOneShot);
}

TEST(CollectiveAlgo, WithoutP2pOnlyTheCopyEnginesWork) {
  EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 8, 2, false, "").value(), CollAlgo::kCopyEngine);
  EXPECT_EQ(chooseAlgorithm(CollOp::kSendRecv, 8, 8, false, "").value(), CollAlgo::kCopyEngine);
  EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 8, 2, false, "ce").value(), CollAlgo::kCopyEngine);
  Status s = chooseAlgorithm(CollOp::kAllReduce, 8, 2, false, "oneshot").status();
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
  EXPECT_NE(s.message().find("P2P"), std::string::npos);
  // The ring copies and reduces locally: it works with copies staged through host memory.
  EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 8, 2, false, "ring").value(), CollAlgo::kRing);
}

TEST(CollectiveAlgo, RelayIsForBroadcastAndReduceInEitherShape) {
  for (CollOp op : {CollOp::kBroadcast, CollOp::kReduce}) {
    EXPECT_EQ(chooseAlgorithm(op, 8, 4, true, "relay").value(), CollAlgo::kRelay);
    EXPECT_EQ(chooseAlgorithm(op, 8, 4, true, "relay", algorithmTable(), false, false, false, false).value(),
              CollAlgo::kRelay);
  }
  for (CollOp op :
       {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kAllToAll, CollOp::kSendRecv}) {
    Status s = chooseAlgorithm(op, 8, 4, true, "relay").status();
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << collOpName(op);
    EXPECT_NE(s.message().find("broadcast and reduce"), std::string::npos) << s.message();
    // Across processes the table decides what the relay does not serve.
    EXPECT_EQ(chooseAlgorithm(op, 8, 4, true, "relay", algorithmTable(), false, false, false, false).value(),
              CollAlgo::kOneShot)
        << collOpName(op);
  }
}

// Ranks in other processes reach each other through the scratch alone: one-shot, from 3 ranks
// the two-shot all-reduce, and the relay's and the chain's broadcast and reduce where their rows
// for ranks in other processes take them; nothing else, whatever the size.
TEST(CollectiveAlgo, AcrossProcessesOnlyTheScratchAlgorithmsAreTaken) {
  auto across = [](CollOp op, std::size_t bytes, int ranks) {
    return chooseAlgorithm(op, bytes, ranks, true, "", algorithmTable(), false, false, false, false).value();
  };
  for (CollOp op : {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kBroadcast, CollOp::kReduce,
                    CollOp::kAllToAll, CollOp::kSendRecv})
    for (int ranks = 2; ranks <= kMaxCommRanks; ++ranks)
      for (std::size_t bytes = 8; bytes <= (std::size_t{1} << 30); bytes *= 4) {
        const CollAlgo a = across(op, bytes, ranks);
        const bool twoShot = op == CollOp::kAllReduce && ranks > 2 && bytes > (256u << 10);
        // Broadcast and reduce: one-shot up to `relayAbove`, the relay to `chainAbove`, the chain.
        std::size_t relayAbove = 0, chainAbove = 0;
        if (op == CollOp::kBroadcast) {
          relayAbove = ranks == 2 ? 32u << 20 : ranks == 3 ? 512u << 10 : 1u << 20;
          chainAbove = ranks <= 3 ? 32u << 20 : 64u << 20;
        } else if (op == CollOp::kReduce) {
          relayAbove = ranks == 2 ? 32u << 20 : ranks == 3 ? 512u << 10 : 1u << 20;
          chainAbove = 32u << 20;
        }
        const bool chain = chainAbove && bytes > chainAbove;
        const bool relay = relayAbove && bytes > relayAbove && !chain;
        EXPECT_EQ(a, twoShot ? CollAlgo::kTwoShot
                     : chain ? CollAlgo::kChain
                     : relay ? CollAlgo::kRelay
                             : CollAlgo::kOneShot)
            << collOpName(op) << " of " << bytes << " on " << ranks;
      }
  // GPUPEER_ALGO applies where the scratch serves it (the copy engines for the reducing
  // operations); elsewhere the table decides.
  auto forced = [](const char* algo, CollOp op) {
    return chooseAlgorithm(op, 1u << 20, 2, true, algo, algorithmTable(), false, false, false, false).value();
  };
  EXPECT_EQ(forced("ce", CollOp::kAllReduce), CollAlgo::kCopyEngine);
  EXPECT_EQ(forced("ce", CollOp::kReduce), CollAlgo::kCopyEngine);
  EXPECT_EQ(forced("ce", CollOp::kAllGather), CollAlgo::kOneShot);
  EXPECT_EQ(forced("split", CollOp::kAllReduce), CollAlgo::kOneShot);
  EXPECT_EQ(forced("twoshot", CollOp::kAllReduce), CollAlgo::kTwoShot);
  EXPECT_EQ(forced("twoshot", CollOp::kBroadcast), CollAlgo::kOneShot);
  EXPECT_FALSE(
      chooseAlgorithm(CollOp::kAllReduce, 8, 2, true, "fastest", algorithmTable(), false, false, false, false).isOk());
  // The same rows decide within one process: a two-shot all-reduce there too. The rows for
  // ranks in other processes do not: in one process split takes a 4 MiB broadcast (the relay
  // across processes), and the copy engines a 256 MiB one on 2 GPUs.
  EXPECT_EQ(chooseAlgorithm(CollOp::kAllReduce, 512u << 10, 4, true, "").value(), CollAlgo::kTwoShot);
  EXPECT_EQ(across(CollOp::kBroadcast, 4u << 20, 4), CollAlgo::kRelay);
  EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 4u << 20, 4, true, "").value(), CollAlgo::kSplit);
  EXPECT_EQ(across(CollOp::kBroadcast, 256u << 20, 2), CollAlgo::kChain);
  EXPECT_EQ(chooseAlgorithm(CollOp::kBroadcast, 256u << 20, 2, true, "").value(), CollAlgo::kCopyEngine);
  // Each row's last size across processes, and 4 bytes more.
  struct Edge {
    CollOp op;
    int ranks;
    std::size_t last;
    CollAlgo upTo, above;
  };
  for (const Edge& e : {Edge{CollOp::kReduce, 4, 1u << 20, CollAlgo::kOneShot, CollAlgo::kRelay},
                        Edge{CollOp::kReduce, 4, 32u << 20, CollAlgo::kRelay, CollAlgo::kChain},
                        Edge{CollOp::kReduce, 3, 32u << 20, CollAlgo::kRelay, CollAlgo::kChain},
                        Edge{CollOp::kReduce, 2, 32u << 20, CollAlgo::kOneShot, CollAlgo::kChain},
                        Edge{CollOp::kBroadcast, 3, 512u << 10, CollAlgo::kOneShot, CollAlgo::kRelay},
                        Edge{CollOp::kBroadcast, 3, 32u << 20, CollAlgo::kRelay, CollAlgo::kChain},
                        Edge{CollOp::kBroadcast, 4, 64u << 20, CollAlgo::kRelay, CollAlgo::kChain}}) {
    EXPECT_EQ(across(e.op, e.last, e.ranks), e.upTo) << collOpName(e.op) << " of " << e.last << " on " << e.ranks;
    EXPECT_EQ(across(e.op, e.last + 4, e.ranks), e.above)
        << collOpName(e.op) << " above " << e.last << " on " << e.ranks;
  }
  // In one process the relay rows do not apply: split takes a 16 MiB reduce on 4 GPUs.
  EXPECT_EQ(chooseAlgorithm(CollOp::kReduce, 16u << 20, 4, true, "").value(), CollAlgo::kSplit);
}

}  // namespace
}  // namespace gpupeer
