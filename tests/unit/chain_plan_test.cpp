// The chain kernel's shape: every rank once along the chain in the right order, the step within
// the kernel's 4000 steps per block, a reduce's partials within its scratch.
#include "collectives/chain_plan.hpp"

#include <gtest/gtest.h>

#include <set>

namespace gpupeer {
namespace {

constexpr std::size_t kKernelSteps = 4000;  // the chain kernel's limit per block

// The ranks from the chain's first (no predecessor) along `next`, checked against `prev`.
std::vector<int> walk(const ChainPlan& p, int n) {
  int first = -1;
  for (int r = 0; r < n; ++r)
    if (p.prev[r] < 0) {
      EXPECT_EQ(first, -1) << "two ranks start the chain";
      first = r;
    }
  std::vector<int> order;
  for (int r = first; r >= 0 && static_cast<int>(order.size()) <= n; r = p.next[r]) {
    if (!order.empty()) {
      EXPECT_EQ(p.prev[r], order.back());
    }
    order.push_back(r);
  }
  return order;
}

TEST(ChainPlan, BroadcastStartsAtTheRootAndReduceEndsThere) {
  for (int n : {2, 3, 4, 8})
    for (int root = 0; root < n; ++root) {
      SCOPED_TRACE(::testing::Message() << n << " ranks, root " << root);
      const ChainPlan b = planChain(CollOp::kBroadcast, n, root, 1u << 20, 32u << 10, 264, 0).value();
      const ChainPlan r = planChain(CollOp::kReduce, n, root, 1u << 20, 64u << 10, 264, 16u << 20).value();
      const std::vector<int> down = walk(b, n), up = walk(r, n);
      ASSERT_EQ(static_cast<int>(down.size()), n);
      ASSERT_EQ(static_cast<int>(up.size()), n);
      EXPECT_EQ(std::set<int>(down.begin(), down.end()).size(), static_cast<std::size_t>(n));
      EXPECT_EQ(std::set<int>(up.begin(), up.end()).size(), static_cast<std::size_t>(n));
      EXPECT_EQ(down.front(), root);
      EXPECT_EQ(up.back(), root);
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(down[i], (root + i) % n);  // each GPU stores into the next in rank order
        EXPECT_EQ(up[i], (root + 1 + i) % n);
      }
    }
}

TEST(ChainPlan, StepsStayWithinTheKernelAndTheScratch) {
  // A block per step up to the most, the step as given.
  ChainPlan p = planChain(CollOp::kBroadcast, 4, 0, 8u << 20, 32u << 10, 264, 0).value();
  EXPECT_EQ(p.blocks, 256);
  EXPECT_EQ(p.stepBytes, 32u << 10);
  p = planChain(CollOp::kBroadcast, 4, 0, 100, 32u << 10, 264, 0).value();
  EXPECT_EQ(p.blocks, 1);
  // 64 GiB: 264 blocks of 32 KiB steps would take 7944 steps each; the step grows to keep
  // within 4000, a multiple of 16.
  const std::size_t huge = std::size_t{64} << 30;
  p = planChain(CollOp::kBroadcast, 4, 0, huge, 32u << 10, 264, 0).value();
  EXPECT_EQ(p.blocks, 264);
  EXPECT_EQ(p.stepBytes % 16, 0u);
  EXPECT_LE((huge + p.stepBytes * p.blocks - 1) / (p.stepBytes * p.blocks), kKernelSteps);
  EXPECT_GT((huge + (p.stepBytes - 16) * p.blocks - 1) / ((p.stepBytes - 16) * p.blocks), kKernelSteps)
      << "the step grows no more than it must";
  // Reduce: 4 ranks x 2 x 16 MiB of scratch, 264 blocks: 64 KiB steps leave 7 positions each.
  p = planChain(CollOp::kReduce, 4, 0, 512u << 20, 64u << 10, 264, 128u << 20).value();
  EXPECT_EQ(p.stepBytes, 64u << 10);
  EXPECT_EQ(p.positions, 7u);
  // Small scratch (the tests' 256 KiB slots on 2 ranks): the step shrinks to two per block
  // (256 blocks: one per 64 KiB step of the message, counted before it shrinks).
  p = planChain(CollOp::kReduce, 2, 1, 16u << 20, 64u << 10, 264, 1u << 20).value();
  EXPECT_EQ(p.blocks, 256);
  EXPECT_EQ(p.stepBytes, (1u << 20) / (2 * 256) / 16 * 16);
  EXPECT_GE(p.positions, 2u);
  EXPECT_LE(p.positions * p.blocks * p.stepBytes, 1u << 20);
}

TEST(ChainPlan, RefusesWhatTheKernelCannotRun) {
  // A reduce whose scratch holds no step per block once the step has grown for the kernel.
  Status s = planChain(CollOp::kReduce, 2, 0, std::size_t{64} << 30, 64u << 10, 264, 1u << 20).status();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("one-shot slots"), std::string::npos) << s.message();
  EXPECT_FALSE(planChain(CollOp::kAllReduce, 4, 0, 1024, 32u << 10, 264, 0).isOk());
  EXPECT_FALSE(planChain(CollOp::kBroadcast, 4, 4, 1024, 32u << 10, 264, 0).isOk());
  EXPECT_FALSE(planChain(CollOp::kBroadcast, 4, 0, 1024, 24, 264, 0).isOk());
  EXPECT_FALSE(planChain(CollOp::kBroadcast, 1, 0, 1024, 32u << 10, 264, 0).isOk());
}

}  // namespace
}  // namespace gpupeer
