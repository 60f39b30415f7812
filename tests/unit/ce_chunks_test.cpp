// The copy-engine reduction's chunks: the even cut by size, and for many counts, element sizes
// and slots that the chunks cover the message exactly and fit a position.
#include "collectives/ce_chunks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "collectives/signal_numbers.hpp"

namespace gpupeer {
namespace {

constexpr std::size_t kMiB = 1u << 20;
constexpr std::size_t kSlot = 128 * kMiB;

// Every chunk's bytes, for `count` elements of `es` bytes.
std::vector<std::size_t> chunkBytes(const CeChunkPlan& plan, std::size_t count, std::size_t es) {
  std::vector<std::size_t> out;
  for (std::size_t j = 0; j < plan.chunks; ++j)
    out.push_back(std::min(plan.chunkElements, count - j * plan.chunkElements) * es);
  return out;
}

TEST(CeChunks, EightEvenChunksFrom64MiBAndFourBelow) {
  CeChunkPlan p = planCeChunks(128 * kMiB / 4, 4, kSlot);
  EXPECT_EQ(chunkBytes(p, 128 * kMiB / 4, 4), std::vector<std::size_t>(8, 16 * kMiB));
  EXPECT_EQ(p.positionBytes, 16 * kMiB);
  EXPECT_EQ(p.positions, 8u);
  p = planCeChunks(32 * kMiB / 4, 4, kSlot);
  EXPECT_EQ(chunkBytes(p, 32 * kMiB / 4, 4), std::vector<std::size_t>(4, 8 * kMiB));
  // A quarter slot at most: 512 MiB in 16 chunks of 32 MiB, four positions.
  p = planCeChunks(512 * kMiB / 2, 2, kSlot);
  EXPECT_EQ(chunkBytes(p, 512 * kMiB / 2, 2), std::vector<std::size_t>(16, 32 * kMiB));
  EXPECT_EQ(p.positions, 4u);
  // 1 MiB at least.
  p = planCeChunks(kMiB / 8, 8, kSlot);
  EXPECT_EQ(chunkBytes(p, kMiB / 8, 8), std::vector<std::size_t>{kMiB});
}

TEST(CeChunks, ChunksCoverTheMessageAndFitAPosition) {
  for (std::size_t slot : {kSlot, 4 * kMiB, 8 * kMiB + 4096}) {
    for (std::size_t es : {1, 2, 4, 8}) {
      for (std::size_t count = 1; count < (700 * kMiB) / es; count = count * 7 / 3 + 13) {
        SCOPED_TRACE(::testing::Message() << count << " x " << es << " bytes, slots of " << slot);
        const CeChunkPlan p = planCeChunks(count, es, slot);
        ASSERT_GE(p.chunks, 1u);
        ASSERT_GE(p.positions, 1u);
        ASSERT_LE(p.positions, static_cast<std::size_t>(kMaxCePositions));
        ASSERT_LE(p.positions * p.positionBytes, slot);
        ASSERT_EQ(p.chunkElements * es, p.positionBytes);  // a chunk fills its position
        ASSERT_EQ(p.positionBytes % 256, 0u);
        std::size_t next = 0;
        for (std::size_t len : chunkBytes(p, count, es)) {
          ASSERT_GT(len, 0u);
          next += len / es;
        }
        ASSERT_EQ(next, count);
      }
    }
  }
}

}  // namespace
}  // namespace gpupeer
