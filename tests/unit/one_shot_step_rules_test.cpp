// The regular one-shot variant's step by rule: the kernel's own where one process drives every
// GPU or 2 processes share the work, 16 KiB from 3 processes (collectives/one_shot_step_rules.hpp).
#include "collectives/one_shot_step_rules.hpp"

#include <gtest/gtest.h>

namespace gpupeer {
namespace {

TEST(OneShotStepRules, OneProcessAndTwoProcessesTakeTheKernelsStep) {
  for (int ranks : {2, 3, 4, 8}) EXPECT_EQ(oneShotStepBytesFor(ranks, false), 0u) << ranks << " GPUs, one process";
  EXPECT_EQ(oneShotStepBytesFor(2, true), 0u) << "2 processes measured faster at the kernel's 32 KiB";
}

TEST(OneShotStepRules, ThreeProcessesAndMoreStep16KiB) {
  for (int ranks : {3, 4, 8}) EXPECT_EQ(oneShotStepBytesFor(ranks, true), 16u << 10) << ranks << " processes";
}

}  // namespace
}  // namespace gpupeer
