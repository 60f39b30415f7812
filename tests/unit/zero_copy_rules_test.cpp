// At which sizes registered buffers are read directly: the rule measured on 2 and 4 H200
// (ranks/zero_copy_rules.hpp).
#include "ranks/zero_copy_rules.hpp"

#include <gtest/gtest.h>

namespace gpupeer {
namespace {

constexpr std::size_t kMiB = 1u << 20;

std::size_t fromOf(CollOp op, int ranks) {
  std::optional<ZeroCopySizes> s = zeroCopySizesFor(op, ranks);
  return s ? s->from : 0;
}

TEST(ZeroCopyRules, TwoRanksReadDirectlyOnlyForLargeAllGathers) {
  EXPECT_EQ(fromOf(CollOp::kAllGather, 2), 32 * kMiB);
  EXPECT_TRUE(zeroCopySizesFor(CollOp::kAllGather, 2)->holds(std::size_t{1} << 40)) << "no upper bound";
  for (CollOp op : {CollOp::kAllReduce, CollOp::kReduceScatter, CollOp::kBroadcast, CollOp::kReduce})
    EXPECT_FALSE(zeroCopySizesFor(op, 2).has_value()) << collOpName(op) << ": the scratch path is as fast or faster";
}

TEST(ZeroCopyRules, MoreRanksReadDirectlyForAllGatherAndLargeBroadcasts) {
  for (int ranks : {3, 4, 8}) {
    EXPECT_EQ(fromOf(CollOp::kAllGather, ranks), 4 * kMiB) << ranks;
    EXPECT_FALSE(zeroCopySizesFor(CollOp::kAllReduce, ranks).has_value()) << ranks;
    EXPECT_FALSE(zeroCopySizesFor(CollOp::kReduceScatter, ranks).has_value()) << ranks;
    EXPECT_FALSE(zeroCopySizesFor(CollOp::kReduce, ranks).has_value()) << "the relay is as fast or faster";
    const ZeroCopySizes broadcast = *zeroCopySizesFor(CollOp::kBroadcast, ranks);
    EXPECT_FALSE(broadcast.holds(16 * kMiB)) << "the relay is faster there";
    EXPECT_TRUE(broadcast.holds(32 * kMiB));
    EXPECT_TRUE(broadcast.holds(64 * kMiB));
    EXPECT_FALSE(broadcast.holds(128 * kMiB)) << "the chain is as fast from there";
  }
}

TEST(ZeroCopyRules, OperationsWithoutTheDirectPathNeverTakeIt) {
  for (int ranks : {2, 4})
    for (CollOp op : {CollOp::kAllToAll, CollOp::kSendRecv})
      EXPECT_FALSE(zeroCopySizesFor(op, ranks).has_value()) << collOpName(op) << " on " << ranks;
}

}  // namespace
}  // namespace gpupeer
