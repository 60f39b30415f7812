// Pairing a group's calls for one process driving every rank: only whole, agreeing sets become
// one gpupeer call; everything else is left whole to NCCL.

#include "nccl_api/one_process_calls.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace gpupeer::nccl_api {
namespace {

const int kSetA = 1, kSetB = 2;
const void* const setA = &kSetA;
const void* const setB = &kSetB;
const int kStreams[4] = {};

GroupedCall collective(const void* set, int ranks, int rank, CollOp op, std::size_t count, int root = -1) {
  GroupedCall c;
  c.set = set;
  c.ranks = ranks;
  c.rank = rank;
  c.op = op;
  c.count = count;
  c.root = root;
  c.stream = &kStreams[rank];
  return c;
}

GroupedCall sendTo(const void* set, int ranks, int rank, int peer, std::size_t count, bool receive = false) {
  GroupedCall c = collective(set, ranks, rank, CollOp::kSendRecv, count, peer);
  c.receive = receive;
  return c;
}

TEST(OneProcessCalls, EveryRanksCallOfOneCollectiveIsOneCall) {
  // nccl-tests -g 2: the same all-reduce on each rank in turn.
  std::vector<GroupedCall> calls = {collective(setA, 2, 0, CollOp::kAllReduce, 64),
                                    collective(setA, 2, 1, CollOp::kAllReduce, 64)};
  std::vector<PairedCalls> p = pairGroupedCalls(calls);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(p[0].whole);
  EXPECT_FALSE(p[0].sendRecv);
  EXPECT_EQ(p[0].byRank, (std::vector<int>{0, 1}));
  EXPECT_EQ(p[0].members, (std::vector<int>{0, 1}));
}

TEST(OneProcessCalls, TheKthCallOfEachRankPairsWithTheKthOfTheOthersInAnyRankOrder) {
  std::vector<GroupedCall> calls = {
      collective(setA, 2, 1, CollOp::kAllReduce, 8), collective(setA, 2, 1, CollOp::kBroadcast, 16, 1),
      collective(setA, 2, 0, CollOp::kAllReduce, 8), collective(setA, 2, 0, CollOp::kBroadcast, 16, 1)};
  std::vector<PairedCalls> p = pairGroupedCalls(calls);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_TRUE(p[0].whole);
  EXPECT_EQ(p[0].byRank, (std::vector<int>{2, 0}));
  EXPECT_TRUE(p[1].whole);
  EXPECT_EQ(p[1].byRank, (std::vector<int>{3, 1}));
}

TEST(OneProcessCalls, CallsThatDisagreeOrMissARankAreNotWhole) {
  std::vector<GroupedCall> calls = {collective(setA, 3, 0, CollOp::kAllReduce, 8),
                                    collective(setA, 3, 1, CollOp::kAllReduce, 16),  // another count
                                    collective(setA, 3, 2, CollOp::kAllReduce, 8),
                                    collective(setA, 3, 0, CollOp::kReduce, 8, 0),
                                    collective(setA, 3, 1, CollOp::kReduce, 8, 1),  // another root
                                    collective(setA, 3, 2, CollOp::kReduce, 8, 0),
                                    collective(setA, 3, 0, CollOp::kAllGather, 8)};  // ranks 1, 2 missing
  std::vector<PairedCalls> p = pairGroupedCalls(calls);
  ASSERT_EQ(p.size(), 3u);
  for (const PairedCalls& q : p) EXPECT_FALSE(q.whole);
  EXPECT_EQ(p[2].members, (std::vector<int>{6}));
  EXPECT_EQ(p[2].byRank, (std::vector<int>{6, -1, -1}));
}

TEST(OneProcessCalls, CallsWithoutASetAreLeftOutAndSetsPairApart) {
  std::vector<GroupedCall> calls = {
      collective(nullptr, 0, 0, CollOp::kAllReduce, 8), collective(setA, 2, 0, CollOp::kAllReduce, 8),
      collective(setB, 2, 0, CollOp::kAllReduce, 8), collective(setB, 2, 1, CollOp::kAllReduce, 8)};
  std::vector<PairedCalls> p = pairGroupedCalls(calls);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].set, setA);
  EXPECT_FALSE(p[0].whole);
  EXPECT_EQ(p[1].set, setB);
  EXPECT_TRUE(p[1].whole);
  EXPECT_EQ(p[1].members, (std::vector<int>{2, 3}));
}

TEST(OneProcessCalls, EveryCallOfASetIsInExactlyOnePairingEvenWithARankOutOfRange) {
  std::vector<GroupedCall> calls = {collective(setA, 2, 0, CollOp::kAllReduce, 8),
                                    collective(setA, 2, 1, CollOp::kAllReduce, 8),
                                    collective(setA, 2, 0, CollOp::kAllReduce, 8)};
  calls[2].rank = 2;  // no such rank
  calls.push_back(sendTo(setA, 2, 0, 1, 8));
  calls[3].rank = -1;
  std::vector<PairedCalls> p = pairGroupedCalls(calls);
  std::vector<int> seen;
  for (const PairedCalls& q : p) seen.insert(seen.end(), q.members.begin(), q.members.end());
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3}));
  ASSERT_EQ(p.size(), 3u);
  EXPECT_TRUE(p[0].whole);
  EXPECT_FALSE(p[1].whole);
  EXPECT_FALSE(p[2].whole);
  EXPECT_TRUE(p[2].sendRecv);
}

TEST(OneProcessCalls, SendsToTheNextRankWithReceivesFromThePreviousAreOneShift) {
  std::vector<GroupedCall> calls;
  for (int r = 0; r < 3; ++r) {
    calls.push_back(sendTo(setA, 3, r, (r + 1) % 3, 32));
    calls.push_back(sendTo(setA, 3, r, (r + 2) % 3, 32, /*receive=*/true));
  }
  std::vector<PairedCalls> p = pairGroupedCalls(calls);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(p[0].sendRecv);
  EXPECT_TRUE(p[0].whole);
  EXPECT_EQ(p[0].byRank, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(p[0].receiveByRank, (std::vector<int>{1, 3, 5}));
}

TEST(OneProcessCalls, OtherSendPatternsAreNotAShift) {
  // Rank 0 sends to rank 2 (not the next), and the others as a shift.
  std::vector<GroupedCall> wrongPeer;
  for (int r = 0; r < 3; ++r) {
    wrongPeer.push_back(sendTo(setA, 3, r, r == 0 ? 2 : (r + 1) % 3, 32));
    wrongPeer.push_back(sendTo(setA, 3, r, (r + 2) % 3, 32, true));
  }
  EXPECT_FALSE(pairGroupedCalls(wrongPeer)[0].whole);
  // A second send of rank 1.
  std::vector<GroupedCall> extra = {sendTo(setA, 2, 0, 1, 8), sendTo(setA, 2, 0, 1, 8, true), sendTo(setA, 2, 1, 0, 8),
                                    sendTo(setA, 2, 1, 0, 8, true), sendTo(setA, 2, 1, 0, 8)};
  std::vector<PairedCalls> p = pairGroupedCalls(extra);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_FALSE(p[0].whole);
  EXPECT_EQ(p[0].members.size(), 5u);
  // Counts that differ.
  std::vector<GroupedCall> counts = {sendTo(setA, 2, 0, 1, 8), sendTo(setA, 2, 0, 1, 8, true), sendTo(setA, 2, 1, 0, 8),
                                     sendTo(setA, 2, 1, 0, 16, true)};
  EXPECT_FALSE(pairGroupedCalls(counts)[0].whole);
  // A rank's send and receive on two streams.
  std::vector<GroupedCall> streams = counts;
  streams[3].count = 8;
  ASSERT_TRUE(pairGroupedCalls(streams)[0].whole);
  streams[3].stream = &kStreams[3];
  EXPECT_FALSE(pairGroupedCalls(streams)[0].whole);
}

}  // namespace
}  // namespace gpupeer::nccl_api
