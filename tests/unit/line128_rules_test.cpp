// When the one-shot kernel takes 128-byte lines, in what slots, and at which lag: the rules
// measured on 2x H200 (collectives/line128_rules.hpp).
#include "collectives/line128_rules.hpp"

#include <gtest/gtest.h>

#include "collectives/one_shot_kernels.cuh"

namespace gpupeer {
namespace {

TEST(Line128Rules, TwoGpusTakeThemForEveryPieceInSlotsForTheWholeOneShotSlot) {
  EXPECT_EQ(line128FromBytesFor(2), 0u);
  EXPECT_EQ(line128SlotBytesFor(2), 18u << 20);
  // A 16 MiB piece (the one-shot slot by default) fits, in whole 4 KiB pages.
  EXPECT_LE(line128Bytes(16u << 20), line128SlotBytesFor(2));
  EXPECT_EQ(line128SlotBytesFor(2) % 4096, 0u);
}

TEST(Line128Rules, FromThreeGpusPiecesFrom64KiBUpToTheirSlot) {
  for (int ranks : {3, 4, 8}) {
    EXPECT_EQ(line128FromBytesFor(ranks), 64u << 10);
    EXPECT_EQ(line128SlotBytesFor(ranks), 2u << 20);
    // A piece of 1.5 MiB fits its slot; one of 2 MiB (slower in lines on 4 GPUs) does not.
    EXPECT_LE(line128Bytes(3u << 19), line128SlotBytesFor(ranks));
    EXPECT_GT(line128Bytes(2u << 20), line128SlotBytesFor(ranks));
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

// The relay's 128-byte variant from 3 GPUs up to 64 MiB (where its rows end), the regular one
// beyond; across processes its slots hold 7.5 MiB parts, 2 GPUs keep theirs (measured on 3
// and 4 processes of 4x H200).
TEST(Line128Rules, TheRelayTakesThemFromThreeGpusUpTo64MiBInSlotsOf8MiB) {
  for (int ranks : {3, 4, 8}) {
    EXPECT_TRUE(relayTakesLines128(ranks, 1u << 20));
    EXPECT_TRUE(relayTakesLines128(ranks, 64u << 20));
    EXPECT_FALSE(relayTakesLines128(ranks, (64u << 20) + 16));
    EXPECT_EQ(line128SlotBytesAcrossProcessesFor(ranks), 8u << 20);
    EXPECT_GT(line128SlotBytesAcrossProcessesFor(ranks), line128SlotBytesFor(ranks));
    // A relay piece fills the slot's lines and no more.
    const std::size_t data = line128DataBytes(line128SlotBytesAcrossProcessesFor(ranks));
    EXPECT_EQ(line128Bytes(data), line128SlotBytesAcrossProcessesFor(ranks));
    EXPECT_GT(line128Bytes(data + 8), line128SlotBytesAcrossProcessesFor(ranks));
  }
  EXPECT_FALSE(relayTakesLines128(2, 1u << 20));
  EXPECT_EQ(line128SlotBytesAcrossProcessesFor(2), line128SlotBytesFor(2));
}

// The host's check before it takes the variant (no GPU: the pointers are only compared).
TEST(Line128Rules, OnlyWholeAlignedWordsThatFitTheSlotTakeThem) {
  alignas(16) static char memory[4096];
  OneShotArgs a;
  a.rank = 0;
  a.ranks = 2;
  a.in = memory;
  a.out = memory + 2048;
  a.len = 240;  // floats: 960 bytes, 8 lines
  a.llScratch[0] = memory;
  a.ll128Scratch[0] = memory;
  a.ll128SlotBytes = 8 * 128;
  EXPECT_TRUE(oneShotAllowsLines128(a, DataType::kFloat32));
  a.len = 241;  // 964 bytes: not whole words
  EXPECT_FALSE(oneShotAllowsLines128(a, DataType::kFloat32));
  a.len = 242;  // 968 bytes: whole words, but 9 lines
  EXPECT_FALSE(oneShotAllowsLines128(a, DataType::kFloat32));
  a.len = 240;
  a.in = memory + 4;  // not on an 8-byte boundary
  EXPECT_FALSE(oneShotAllowsLines128(a, DataType::kFloat32));
  a.in = memory;
  a.outStride = 241;  // every chunk after the first off an 8-byte boundary
  EXPECT_FALSE(oneShotAllowsLines128(a, DataType::kFloat32));
  a.outStride = 242;
  EXPECT_TRUE(oneShotAllowsLines128(a, DataType::kFloat32));
  a.ll128Scratch[0] = nullptr;  // no slots (3+ GPUs by default)
  EXPECT_FALSE(oneShotAllowsLines128(a, DataType::kFloat32));
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
