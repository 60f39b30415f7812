// When the one-shot kernel takes 128-byte lines, in what slots, and at which lag: the rules
// measured on 2x H200 (comm/line128_rules.hpp).
#include "comm/line128_rules.hpp"

#include <gtest/gtest.h>

#include "cuda/one_shot_kernels.cuh"

namespace gpupeer {
namespace {

TEST(Line128Rules, TwoGpusTakeThemForEveryPieceInSlotsForTheWholeOneShotSlot) {
  EXPECT_EQ(line128FromBytesFor(2), 0u);
  EXPECT_EQ(line128SlotBytesFor(2), 18u << 20);
  // A 16 MiB piece (the one-shot slot by default) fits, in whole 4 KiB pages.
  EXPECT_LE(line128Bytes(16u << 20), line128SlotBytesFor(2));
  EXPECT_EQ(line128SlotBytesFor(2) % 4096, 0u);
}

TEST(Line128Rules, FromThreeGpusNeverAndNoSlots) {
  for (int ranks : {3, 4, 8}) {
    EXPECT_EQ(line128FromBytesFor(ranks), kNoLines128);
    EXPECT_EQ(line128SlotBytesFor(ranks), 0u);
  }
}

TEST(Line128Rules, LagShrinksAsPiecesGrow) {
  EXPECT_EQ(line128LagFor(64u << 10), 2);
  EXPECT_EQ(line128LagFor((4u << 20) - 8), 2);
  EXPECT_EQ(line128LagFor(4u << 20), 1);
  EXPECT_EQ(line128LagFor((8u << 20) - 8), 1);
  EXPECT_EQ(line128LagFor(8u << 20), 0);
  EXPECT_EQ(line128LagFor(16u << 20), 0);
}

TEST(Line128Rules, ThreeBlocksPerSmOnTwoGpusOneFromThree) {
  EXPECT_EQ(line128BlocksFor(2, 132), 396);
  EXPECT_EQ(line128BlocksFor(2, 108), 324);
  EXPECT_EQ(line128BlocksFor(4, 132), 132);
  // Within the one-shot kernels' grid limit (their operation counter's stride).
  EXPECT_LE(line128BlocksFor(2, 132), kMaxOneShotBlocks);
}

TEST(Line128Rules, LinesHold120BytesEach) {
  EXPECT_EQ(line128Bytes(8), 128u);
  EXPECT_EQ(line128Bytes(120), 128u);
  EXPECT_EQ(line128Bytes(128), 256u);
  EXPECT_EQ(line128Bytes(1200), 1280u);
  EXPECT_EQ(line128Bytes(1208), 1408u);
}

}  // namespace
}  // namespace gpupeer
