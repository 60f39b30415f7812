// `gpupeer coll --procs` as a user runs it, where the processes outnumber the GPUs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "gpu_test_support.hpp"

namespace gpupeer {
namespace {

// Runs the CLI on GPUs `devices`; returns its exit status (-1 where it did not exit) and its
// output.
int runCli(const std::string& devices, const std::string& args, std::string& output) {
  const std::string cmd =
      "CUDA_VISIBLE_DEVICES=" + devices + " timeout 120 " + std::string(GPUPEER_CLI_PATH) + " " + args + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return -1;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe)) output += buf.data();
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// NCCL takes one GPU per rank: with more ranks than GPUs the run goes on without the baseline
// and says why. Three ranks on two GPUs hung: the rank alone on its GPU waited in NCCL's
// initialisation for the two that NCCL had refused.
TEST(CollProcsGpu, NcclBaselineSkippedWhereRanksShareAGpu) {
  GPUPEER_REQUIRE_GPUS(1);
  const std::size_t visible = testing::machine().gpus.size();
  const int procs = visible >= 2 ? 3 : 2;
  const std::string devices = visible >= 2 ? "0,1" : "0";
  std::string out;
  const int rc =
      runCli(devices,
             "coll reduce --procs " + std::to_string(procs) + " -b 8 -e 64K -f 64 -n 2 -w 1 -G 2 --baseline nccl", out);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("NCCL not run: " + std::to_string(procs) + " ranks share"), std::string::npos) << out;
  EXPECT_NE(out.find("#wrong"), std::string::npos) << out;
}

}  // namespace
}  // namespace gpupeer
