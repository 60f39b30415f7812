// `gpupeer coll --procs` as a user runs it, where the processes outnumber the GPUs.
#include <gtest/gtest.h>

#include <string>

#include "cli_support.hpp"
#include "gpu_test_support.hpp"

namespace gpupeer {
namespace {

// NCCL takes one GPU per rank: with more ranks than GPUs the run goes on without the baseline
// and says why. Three ranks on two GPUs hung: the rank alone on its GPU waited in NCCL's
// initialisation for the two that NCCL had refused.
TEST(CollProcsGpu, NcclBaselineSkippedWhereRanksShareAGpu) {
  GPUPEER_REQUIRE_GPUS(1);
  const std::size_t visible = testing::machine().gpus.size();
  const int procs = visible >= 2 ? 3 : 2;
  const std::string devices = visible >= 2 ? "0,1" : "0";
  testing::TempDir scratch;
  const CliRun run = runCli(
      scratch, "coll reduce --procs " + std::to_string(procs) + " -b 8 -e 64K -f 64 -n 2 -w 1 -G 2 --baseline nccl",
      nullptr, "CUDA_VISIBLE_DEVICES=" + devices + " timeout 120 ");
  ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("NCCL not run: " + std::to_string(procs) + " ranks share"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("#wrong"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace gpupeer
