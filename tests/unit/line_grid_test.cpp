// The low-latency kernel's grid: the measured shapes by size, a forced block size, and for
// every line count that the shares cover every line with whole warps, no block left idle
// unless the grid was capped.
#include "collectives/line_grid.hpp"

#include <gtest/gtest.h>

#include <cstddef>

namespace gpupeer {
namespace {

TEST(LineGrid, SmallBlocksUntilTheGridWouldPassTwoPerSm) {
  struct Expect {
    std::size_t lines;
    int blocks, threads;
  };
  for (const Expect& e :
       {Expect{1, 1, 32}, Expect{256, 4, 64}, Expect{1024, 16, 64}, Expect{2049, 33, 64}, Expect{16384, 256, 64},
        Expect{32768, 256, 128}, Expect{65536, 256, 256}, Expect{131072, 256, 512}, Expect{200000, 264, 512}}) {
    SCOPED_TRACE(e.lines);
    const LineGrid g = lineGridFor(e.lines, 0);
    EXPECT_EQ(g.blocks, e.blocks);
    EXPECT_EQ(g.threads, e.threads);
  }
}

TEST(LineGrid, AForcedBlockSizeKeepsWholeWarpsAndTheCap) {
  LineGrid g = lineGridFor(4096, 96);
  EXPECT_EQ(g.blocks, 43);
  EXPECT_EQ(g.threads, 96);
  g = lineGridFor(32768, 32);  // 1024 blocks of 32 would not be resident: 264 of 128
  EXPECT_EQ(g.blocks, kMaxLineBlocks);
  EXPECT_EQ(g.threads, 128);
}

TEST(LineGrid, SharesCoverEveryLineAndLeaveNoBlockIdle) {
  for (int forced : {0, 32, 64, 96, 512})
    for (std::size_t lines = 1; lines < 300000; lines = lines * 3 / 2 + 1) {
      SCOPED_TRACE(::testing::Message() << lines << " lines, " << forced << " per block");
      const LineGrid g = lineGridFor(lines, forced);
      const std::size_t share = lineShare(lines, g.blocks);
      EXPECT_EQ(share % 32, 0u);
      EXPECT_GE(share * g.blocks, lines);
      EXPECT_LE(g.blocks, kMaxLineBlocks);
      EXPECT_EQ(g.threads % 32, 0);
      EXPECT_LE(g.threads, kMaxLineBlockLines);
      EXPECT_GE(static_cast<std::size_t>(g.threads), std::min<std::size_t>(share, kMaxLineBlockLines));
      if (g.blocks < kMaxLineBlocks) {
        EXPECT_LT(share * (g.blocks - 1), lines);
      }
    }
}

}  // namespace
}  // namespace gpupeer
