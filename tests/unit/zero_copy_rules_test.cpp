// From which size registered buffers are read directly: the rule measured on 2 and 4 H200
// (ranks/zero_copy_rules.hpp).
#include "ranks/zero_copy_rules.hpp"

#include <gtest/gtest.h>

namespace gpupeer {
namespace {

constexpr std::size_t kMiB = 1u << 20;

TEST(ZeroCopyRules, TwoRanksReadDirectlyOnlyForLargeMessages) {
  EXPECT_EQ(zeroCopyFromBytesFor(CollOp::kAllReduce, 2), 64 * kMiB);
  EXPECT_EQ(zeroCopyFromBytesFor(CollOp::kReduceScatter, 2), 64 * kMiB);
  EXPECT_EQ(zeroCopyFromBytesFor(CollOp::kAllGather, 2), 32 * kMiB);
}

TEST(ZeroCopyRules, MoreRanksReadDirectlyOnlyForAllGather) {
  for (int ranks : {3, 4, 8}) {
    EXPECT_EQ(zeroCopyFromBytesFor(CollOp::kAllGather, ranks), 4 * kMiB) << ranks;
    EXPECT_FALSE(zeroCopyFromBytesFor(CollOp::kAllReduce, ranks).has_value()) << ranks;
    EXPECT_FALSE(zeroCopyFromBytesFor(CollOp::kReduceScatter, ranks).has_value()) << ranks;
  }
}

TEST(ZeroCopyRules, OperationsWithoutTheDirectPathNeverTakeIt) {
  for (int ranks : {2, 4})
    for (CollOp op : {CollOp::kBroadcast, CollOp::kReduce, CollOp::kAllToAll, CollOp::kSendRecv})
      EXPECT_FALSE(zeroCopyFromBytesFor(op, ranks).has_value()) << collOpName(op) << " on " << ranks;
}

}  // namespace
}  // namespace gpupeer
