// The launch threads: every rank's job runs once per call on its own thread, the first error
// comes back, and the threads are only used where each launching thread has a CPU.
#include "collectives/launch_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

namespace gpupeer {
namespace {

struct Seen {
  std::atomic<int> calls{0};
  std::atomic<int> rankSum{0};
  std::thread::id threads[4];
  int failRank = -1;
};

Status record(const void* context, int rank) {
  auto& seen = *static_cast<Seen*>(const_cast<void*>(context));
  seen.calls++;
  seen.rankSum += rank;
  seen.threads[rank] = std::this_thread::get_id();
  if (rank == seen.failRank) return Status(ErrorCode::kCuda, "launch failed on rank " + std::to_string(rank));
  return Status::ok();
}

TEST(LaunchPool, RunsEveryRankOncePerCallEachOnItsOwnThread) {
  LaunchPool pool({0, 1, 2, 3});  // no GPU needed: the device is only made current
  for (int call = 0; call < 100; ++call) {
    Seen seen;
    ASSERT_TRUE(pool.runAll(record, &seen).isOk());
    EXPECT_EQ(seen.calls.load(), 4);
    EXPECT_EQ(seen.rankSum.load(), 0 + 1 + 2 + 3);
    EXPECT_EQ(seen.threads[0], std::this_thread::get_id());  // rank 0 on the caller
    EXPECT_EQ(std::set<std::thread::id>(seen.threads, seen.threads + 4).size(), 4u);
  }
}

TEST(LaunchPool, TheFirstErrorComesBackAfterEveryRankRan) {
  LaunchPool pool({0, 1, 2});
  Seen seen;
  seen.failRank = 2;
  Status st = pool.runAll(record, &seen);
  EXPECT_EQ(st.code(), ErrorCode::kCuda);
  EXPECT_NE(st.message().find("rank 2"), std::string::npos);
  EXPECT_EQ(seen.calls.load(), 3);
}

TEST(LaunchPool, ThreadsOnlyWhereEveryLauncherHasACpu) {
  EXPECT_FALSE(launchThreadsHelp(1, 2));
  EXPECT_TRUE(launchThreadsHelp(2, 2));
  EXPECT_FALSE(launchThreadsHelp(7, 8));
  EXPECT_TRUE(launchThreadsHelp(32, 8));
  EXPECT_FALSE(launchThreadsHelp(32, 1));
  EXPECT_GE(cpusAvailable(), 1);
  EXPECT_LE(cpusAvailable(), static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

}  // namespace
}  // namespace gpupeer
