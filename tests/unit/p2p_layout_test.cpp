// The point-to-point kernel's lanes split each chunk between them: every byte in exactly one
// lane's part, parts in order on 16-byte boundaries, and each lane's part at the same place of
// the slot in every chunk, whatever its length.

#include <gtest/gtest.h>

#include "ranks/p2p_kernels.cuh"

namespace gpupeer {
namespace {

TEST(P2pLayout, LanesTileEveryChunkInOrderOn16ByteBoundaries) {
  const P2pLayout l{2, std::size_t{4} << 20};
  for (std::size_t len :
       {std::size_t{0}, std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{255}, std::size_t{131072},
        std::size_t{131073}, std::size_t{2097154}, l.slotBytes, l.slotBytes - 1}) {
    EXPECT_EQ(l.laneBegin(len, 0), 0u) << len;
    EXPECT_EQ(l.laneBegin(len, kP2pLanes), len) << len;
    for (int lane = 0; lane < kP2pLanes; ++lane) {
      const std::size_t b = l.laneBegin(len, lane), e = l.laneBegin(len, lane + 1);
      EXPECT_LE(b, e) << len << " lane " << lane;
      if (b < len) EXPECT_EQ(b % 16, 0u) << len << " lane " << lane;
    }
  }
}

// Lanes move on independently: a lane must find its part where it was in the chunk before,
// or a lane ahead writes a short chunk's bytes that a slower lane has not read yet (a short
// last chunk of one send followed by the next send into the same slot).
TEST(P2pLayout, EachLaneOwnsTheSameRegionOfEverySlotWhateverTheChunkLength) {
  const P2pLayout l{4, std::size_t{4} << 20};
  const std::size_t part = l.slotBytes / kP2pLanes;
  for (std::size_t len : {std::size_t{1}, std::size_t{2097154}, std::size_t{3} << 20, l.slotBytes})
    for (int lane = 0; lane < kP2pLanes; ++lane) {
      EXPECT_GE(l.laneBegin(len, lane), std::min(len, part * lane)) << len << " lane " << lane;
      EXPECT_LE(l.laneBegin(len, lane + 1), part * (lane + 1)) << len << " lane " << lane;
    }
}

TEST(P2pLayout, WordsFollowTheSlotsOneSetPerLane) {
  const P2pLayout l{4, 1u << 20};
  EXPECT_EQ(l.wordsOffset(), 8u << 20);
  EXPECT_EQ(l.bytes(), (8u << 20) + 4 * 4 * kP2pLanes * sizeof(std::uint32_t));
  EXPECT_EQ(l.slotOffset(3, 1), 7u << 20);
}

}  // namespace
}  // namespace gpupeer
