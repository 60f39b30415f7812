// Version codes as people write them: NCCL's two encodings and CUDA's.
#include "gpupeer/version_text.hpp"

#include <gtest/gtest.h>

namespace gpupeer {
namespace {

TEST(VersionText, NcclFrom29IsMajorTimes10000) {
  EXPECT_EQ(ncclVersionText(22803), "2.28.3");
  EXPECT_EQ(ncclVersionText(21903), "2.19.3");
  EXPECT_EQ(ncclVersionText(20901), "2.9.1");
}

TEST(VersionText, NcclBefore29IsMajorTimes1000) {
  // nccl.h's NCCL_VERSION for 2.8 and older; ncclGetVersion of NCCL 2.7.8 gives 2708.
  EXPECT_EQ(ncclVersionText(2708), "2.7.8");
  EXPECT_EQ(ncclVersionText(2804), "2.8.4");
}

TEST(VersionText, Cuda) {
  EXPECT_EQ(cudaVersionText(13000), "13.0");
  EXPECT_EQ(cudaVersionText(12040), "12.4");
}

}  // namespace
}  // namespace gpupeer
