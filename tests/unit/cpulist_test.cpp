#include "core/cpulist.hpp"

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
  EXPECT_FALSE(parseCpuList("-1").has_value());
  EXPECT_FALSE(parseCpuList("1-2-3").has_value());
  EXPECT_FALSE(parseCpuList("3x").has_value());
}

// Hostile lists: each bounded by its caps, in time linear in the text (the old parser looped
// past INT_MAX on "2147483647" and inserted 1.3 billion CPUs for the repeated range).
TEST(CpuList, NumbersPastTheLargestCpuAreRefused) {
  EXPECT_FALSE(parseCpuList("2147483647").has_value());
  EXPECT_FALSE(parseCpuList("0-2147483647").has_value());
  EXPECT_FALSE(parseCpuList("99999999999999999999").has_value());
  auto last = parseCpuList(std::to_string(kMaxCpuNumber));
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(*last, (std::set<int>{kMaxCpuNumber}));
}

TEST(CpuList, ARangeRepeatedIsMergedOrRefusedPastTheItemCap) {
  std::string repeated;
  for (std::size_t i = 0; i < kMaxCpuListRanges; ++i) repeated += "0-65535,";
  auto ranges = parseCpuRanges(repeated);
  ASSERT_TRUE(ranges.has_value());
  EXPECT_EQ(*ranges, (CpuRanges{{0, 65535}}));
  EXPECT_EQ(parseCpuList(repeated)->size(), 65536u);
  std::string past;
  for (int i = 0; i < 20000; ++i) past += "0-65535,";
  EXPECT_FALSE(parseCpuRanges(past).has_value());
}

TEST(CpuList, ManyRangesAreSortedMergedAndCompared) {
  std::string odd, even;
  for (int c = 599; c >= 1; c -= 2) odd += std::to_string(c) + ",";  // 300 ranges, out of order
  for (int c = 0; c < 600; c += 2) even += std::to_string(c) + ",";
  auto a = parseCpuRanges(odd), b = parseCpuRanges(even);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->size(), 300u);
  EXPECT_EQ(a->front(), (std::pair<int, int>{1, 1}));
  EXPECT_FALSE(cpuRangesOverlap(*a, *b));
  EXPECT_TRUE(cpuRangesOverlap(*a, *parseCpuRanges("590-600")));
  auto all = parseCpuRanges(odd + even);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(*all, (CpuRanges{{0, 599}}));
}

}  // namespace
}  // namespace gpupeer
