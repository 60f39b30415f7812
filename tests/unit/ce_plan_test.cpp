// The copy-engine algorithm's chunks: they cover the message in order without gaps or
// overlaps, fit a scratch position, cycle through the positions, and the tail halves.
#include "comm/ce_plan.hpp"

#include <gtest/gtest.h>

namespace gpupeer {
namespace {

constexpr std::size_t kMiB = 1u << 20;

void expectCovers(const CePlan& p, std::size_t count, std::size_t es, std::size_t slotBytes) {
  ASSERT_FALSE(p.chunks.empty());
  ASSERT_GE(p.positions, 1);
  EXPECT_LE(p.positions * p.chunkElements * es, slotBytes) << "positions overflow the slot";
  std::size_t next = 0;
  for (std::size_t j = 0; j < p.chunks.size(); ++j) {
    const CeChunk& c = p.chunks[j];
    EXPECT_EQ(c.first, next) << "chunk " << j;
    EXPECT_GT(c.len, 0u) << "chunk " << j;
    EXPECT_LE(c.len, p.chunkElements) << "chunk " << j << " longer than a position";
    EXPECT_EQ(c.position, static_cast<int>(j % p.positions)) << "chunk " << j;
    next = c.first + c.len;
  }
  EXPECT_EQ(next, count);
}

TEST(CePlan, WholeChunksAsTheCopyEngineAlgorithmCutThem) {
  // 8 chunks from 64 MiB, 4 below, at least 1 MiB and a 64th of the slot (2 MiB here), at most
  // a quarter of a 128 MiB slot.
  const std::size_t slot = 128 * kMiB;
  struct Case {
    std::size_t bytes, chunkBytes, chunks;
  };
  for (const Case& k : {Case{128 * kMiB, 16 * kMiB, 8}, Case{512 * kMiB, 32 * kMiB, 16}, Case{32 * kMiB, 8 * kMiB, 4},
                        Case{8 * kMiB, 2 * kMiB, 4}, Case{2 * kMiB, 2 * kMiB, 1}, Case{100, 2 * kMiB, 1}}) {
    SCOPED_TRACE(::testing::Message() << k.bytes << " bytes");
    const CePlan p = planCeChunks(k.bytes / 4, 4, slot, 0, false);
    expectCovers(p, k.bytes / 4, 4, slot);
    EXPECT_EQ(p.chunkElements * 4, k.chunkBytes);
    EXPECT_EQ(p.chunks.size(), k.chunks);
    EXPECT_EQ(p.positions, static_cast<int>(slot / k.chunkBytes));
  }
  // A forced count of parts.
  const CePlan p16 = planCeChunks(32 * kMiB, 4, slot, 16, false);  // 128 MiB of floats
  EXPECT_EQ(p16.chunks.size(), 16u);
  EXPECT_EQ(p16.chunkElements * 4, 8 * kMiB);
}

TEST(CePlan, TheLastChunkGoesInHalvesDownToOneMiB) {
  const std::size_t slot = 128 * kMiB;
  const CePlan p = planCeChunks(32 * kMiB, 4, slot, 0, true);  // 128 MiB: 7 x 16 MiB, then 8, 4, 2, 1, 1
  expectCovers(p, 32 * kMiB, 4, slot);
  ASSERT_EQ(p.chunks.size(), 12u);
  const std::size_t tail[] = {8 * kMiB, 4 * kMiB, 2 * kMiB, kMiB, kMiB};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(p.chunks[7 + i].len * 4, tail[i]) << "tail piece " << i;
  // Chunks past the slot's positions reuse them in turn.
  EXPECT_EQ(p.chunks[8].position, 0);
  // A message of one small chunk is not cut.
  const CePlan small = planCeChunks(kMiB / 4, 4, slot, 0, true);
  ASSERT_EQ(small.chunks.size(), 1u);
}

TEST(CePlan, OddCountsAndElementSizesStillCoverEveryElement) {
  for (std::size_t es : {1u, 2u, 4u, 8u})
    for (std::size_t count : {std::size_t{1}, std::size_t{12345}, (37 * kMiB + 3) / es, (300 * kMiB + 7) / es})
      for (bool tail : {false, true})
        for (std::size_t slot : {kMiB, 128 * kMiB}) {
          SCOPED_TRACE(::testing::Message() << count << " x " << es << " bytes, tail " << tail << ", slot " << slot);
          const CePlan p = planCeChunks(count, es, slot, 0, tail);
          expectCovers(p, count, es, slot);
          if (tail && p.chunks.size() > 1)
            for (std::size_t j = 0; j + 1 < p.chunks.size(); ++j)
              if (p.chunks[j].len < p.chunkElements) {
                // Within the tail: each piece at least half the one before, a 256-byte multiple.
                EXPECT_EQ(p.chunks[j].len * es % 256, 0u) << "chunk " << j;
                EXPECT_GE(p.chunks[j + 1].len * 2 + 256 / es, p.chunks[j].len) << "chunk " << j;
              }
        }
}

}  // namespace
}  // namespace gpupeer
