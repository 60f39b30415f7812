// gpupeer nccl: the library beside the binary, the real NCCL, and the settings to use.

#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace gpupeer {
namespace {

TEST(NcclCommand, NamesTheLibraryTheRealNcclAndTheSettings) {
  testing::TempDir scratch;
  CliRun r = runCli(scratch, "nccl");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(std::string("libgpupeer_nccl.so  ") + GPUPEER_NCCL_API_PATH), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("real NCCL           /"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(std::string("LD_PRELOAD=") + GPUPEER_NCCL_API_PATH), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(std::string("VLLM_NCCL_SO_PATH=") + GPUPEER_NCCL_API_PATH), std::string::npos) << r.out;
}

TEST(NcclCommand, EnvPrintsOnlyShellSettings) {
  testing::TempDir scratch;
  CliRun r = runCli(scratch, "nccl --env");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, std::string("export LD_PRELOAD=") + GPUPEER_NCCL_API_PATH +
                       "\nexport VLLM_NCCL_SO_PATH=" + GPUPEER_NCCL_API_PATH + "\n");
}

TEST(NcclCommand, AMissingRealNcclFailsAndSaysHowToNameOne) {
  testing::TempDir scratch;
  CliRun r = runCli(scratch, "nccl", nullptr, "GPUPEER_NCCL_REAL_LIBRARY=" + scratch.path() + "/absent.so ");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.out.find("real NCCL           not found"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gpupeer
