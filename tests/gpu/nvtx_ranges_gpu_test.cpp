// The NVTX ranges of real work, as a tracing tool sees them (the recorder tool of
// tests/tools/nvtx_recorder, attached through NVTX_INJECTION64_PATH as Nsight Systems is): each
// collective, transfer-engine copy and benchmark step by name and size.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpu_test_support.hpp"

namespace gpupeer {
namespace {

// Runs the CLI with the recorder attached and returns what it recorded.
std::string recordedRanges(const std::string& args) {
  std::string out = (std::filesystem::temp_directory_path() / ("gpupeer-nvtx-" + std::to_string(::getpid()))).string();
  std::filesystem::remove(out);
  std::string cmd = "NVTX_INJECTION64_PATH=" + std::string(GPUPEER_NVTX_RECORDER_PATH) + " NVTX_RECORDER_OUT=" + out +
                    " " + GPUPEER_CLI_PATH + " " + args + " >/dev/null 2>&1";
  int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd;
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(out);
  return text.str();
}

TEST(NvtxRangesGpu, EachCollectiveIsARangeNamedByOperationAndSize) {
  GPUPEER_REQUIRE_GPUS(2);
  std::string ranges = recordedRanges("coll all_reduce -b 1M -e 1M -n 2 -w 1 -g 2");
  EXPECT_NE(ranges.find("domain gpupeer\n"), std::string::npos) << ranges;
  EXPECT_NE(ranges.find("push gpupeer all_reduce 1 MiB float by "), std::string::npos) << ranges;
  EXPECT_EQ(ranges.find("push gpupeer all_reduce 2 MiB"), std::string::npos) << ranges;
}

TEST(NvtxRangesGpu, EachCollectiveOfAOneRankCommunicatorIsARange) {
  GPUPEER_REQUIRE_GPUS(1);
  // -g 1: a communicator of one rank, run in this process (the recorder writes one file).
  std::string ranges = recordedRanges("coll all_gather -g 1 -b 64K -e 64K -n 2 -w 1");
  EXPECT_NE(ranges.find("push gpupeer all_gather 64 KiB float by copy"), std::string::npos) << ranges;
}

TEST(NvtxRangesGpu, BenchmarkStepsAndTransferEngineCopiesAreRanges) {
  GPUPEER_REQUIRE_GPUS(2);
  std::string ranges = recordedRanges("bench -t ce_write,copy -s 4M -i 1 --copies 1 -d 0,1");
  EXPECT_NE(ranges.find("push gpupeer bench ce_write GPU0->GPU1 4 MiB\n"), std::string::npos) << ranges;
  EXPECT_NE(ranges.find("push gpupeer bench sample 1 of 1: 1 x 4194304 B on 1 lane(s)\n"), std::string::npos) << ranges;
  EXPECT_NE(ranges.find("push gpupeer copy 4194304 B GPU0 -> GPU1 by "), std::string::npos) << ranges;
}

}  // namespace
}  // namespace gpupeer
