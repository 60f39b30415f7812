#include "gpupeer/cpulist.hpp"

#include <gtest/gtest.h>

namespace gpupeer {
namespace {

TEST(CpuList, ParsesRangesAndSingles) {
  auto cpus = parseCpuList("0-3,8,10-11\n");
  ASSERT_TRUE(cpus.has_value());
  EXPECT_EQ(*cpus, (std::set<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(formatCpuList(*cpus), "0-3,8,10-11");
}

TEST(CpuList, EmptyIsEmptySet) {
  auto cpus = parseCpuList("");
  ASSERT_TRUE(cpus.has_value());
  EXPECT_TRUE(cpus->empty());
  EXPECT_EQ(formatCpuList({}), "");
}

TEST(CpuList, RejectsMalformed) {
  EXPECT_FALSE(parseCpuList("a-b").has_value());
  EXPECT_FALSE(parseCpuList("5-3").has_value());
  EXPECT_FALSE(parseCpuList("1-").has_value());
  EXPECT_FALSE(parseCpuList("0-99999999").has_value());
}

}  // namespace
}  // namespace gpupeer
