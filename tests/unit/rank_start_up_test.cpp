// What a rank of RankCommunicator can tell alone is refused before it waits for the others: a
// GPU that does not exist (or a machine without one) once waited for the rendezvous up to the
// bound, so the rank said "timeout" instead of what was wrong.
#include <gtest/gtest.h>

#include <chrono>

#include "gpupeer/rank_communicator.hpp"

namespace gpupeer {
namespace {

using Clock = std::chrono::steady_clock;

TEST(RankStartUp, MissingGpuIsRefusedBeforeTheRendezvous) {
  Result<UniqueId> id = makeUniqueId();
  ASSERT_TRUE(id.isOk()) << id.status().message();
  RankCommOptions options;
  options.device = 99;
  options.timeoutMs = 20'000;  // the second rank never comes: only an early refusal ends this fast
  auto start = Clock::now();
  auto comm = RankCommunicator::init(2, id.value(), 0, options);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  ASSERT_FALSE(comm.isOk());
  EXPECT_NE(comm.status().code(), ErrorCode::kTimeout) << comm.status().toString();
  EXPECT_LT(seconds, 10.0) << comm.status().toString();
  // With GPUs: "GPU99 does not exist"; without: CUDA's reason that there is none.
  if (comm.status().code() == ErrorCode::kInvalidArgument) {
    EXPECT_NE(comm.status().message().find("GPU99 does not exist"), std::string::npos) << comm.status().message();
  }
}

TEST(RankStartUp, BoundBelowOneMillisecondIsRefusedBeforeTheRendezvous) {
  Result<UniqueId> id = makeUniqueId();
  ASSERT_TRUE(id.isOk());
  RankCommOptions options;
  options.timeoutMs = 0;
  auto comm = RankCommunicator::init(2, id.value(), 0, options);
  ASSERT_FALSE(comm.isOk());
  EXPECT_EQ(comm.status().code(), ErrorCode::kInvalidArgument) << comm.status().toString();
  EXPECT_NE(comm.status().message().find("a bound of 0 ms"), std::string::npos) << comm.status().message();
}

}  // namespace
}  // namespace gpupeer
