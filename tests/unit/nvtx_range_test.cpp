// NVTX ranges as a tracing tool sees them: the test's recorder tool (tests/tools/nvtx_recorder)
// is attached the way Nsight Systems attaches its own, through NVTX_INJECTION64_PATH.
#include "core/nvtx_range.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "kb_test_support.hpp"

namespace gpupeer {
namespace {

TEST(NvtxRange, AnAttachedToolSeesEachRangeByNameInTheGpupeerDomain) {
  testing::TempDir dir;
  const std::string out = dir.path() + "/ranges.txt";
  // NVTX reads the variable at the process's first NVTX call; ctest runs each test in a
  // process of its own, so this test's setting is the one NVTX sees.
  ::setenv("NVTX_INJECTION64_PATH", GPUPEER_NVTX_RECORDER_PATH, 1);
  ::setenv("NVTX_RECORDER_OUT", out.c_str(), 1);
  ASSERT_TRUE(nvtxToolAttached()) << "NVTX state was read earlier in this process: run this test on its own";
  {
    NvtxRange outer("all_reduce {} by {}", "1 MiB", "oneshot");
    NvtxRange inner("copy {} B", 4096);
  }
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "domain gpupeer\n"
            "push gpupeer all_reduce 1 MiB by oneshot\n"
            "push gpupeer copy 4096 B\n"
            "pop gpupeer\n"
            "pop gpupeer\n");
}

}  // namespace
}  // namespace gpupeer
