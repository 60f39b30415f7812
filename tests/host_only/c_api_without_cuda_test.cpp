// The C API as libgpupeer_c.so has it in the build without CUDA, linked into this test binary:
// every entry must resolve against the host sources and the stand-ins (a C entry that reaches GPU
// code without one fails this link, not a user's import), the diagnosis entries work, and the
// GPU entries say why they cannot.

#include <gtest/gtest.h>

#include <string>

#include "gpupeer/c_api.h"
#include "gpupeer/probe.hpp"

namespace gpupeer {
namespace {

TEST(CApiWithoutCuda, ExplainWorks) {
  char* out = nullptr;
  size_t matches = 0;
  gpupeer_error* error = nullptr;
  ASSERT_EQ(gpupeer_explain("cudaErrorPeerAccessUnsupported", nullptr, nullptr, 0, 1, GPUPEER_FORMAT_TEXT, &out,
                            &matches, &error),
            GPUPEER_OK)
      << (error ? gpupeer_error_message(error) : "");
  ASSERT_NE(out, nullptr);
  EXPECT_GE(matches, 1u);
  EXPECT_NE(std::string(out).find("peer"), std::string::npos) << out;
  gpupeer_string_free(out);
}

TEST(CApiWithoutCuda, GpuEntriesSayTheBuildHasNoCuda) {
  const int devices[2] = {0, 1};
  gpupeer_comm* comm = nullptr;
  gpupeer_error* error = nullptr;
  EXPECT_NE(gpupeer_comm_create(devices, 2, &comm, &error), GPUPEER_OK);
  ASSERT_NE(error, nullptr);
  EXPECT_NE(std::string(gpupeer_error_message(error)).find(kBuiltWithoutCuda), std::string::npos)
      << gpupeer_error_message(error);
  gpupeer_error_free(error);
  EXPECT_EQ(comm, nullptr);
}

}  // namespace
}  // namespace gpupeer
