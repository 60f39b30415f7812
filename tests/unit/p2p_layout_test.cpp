// The point-to-point kernel's lanes deal each chunk between them in granules: every byte moved
// by exactly one lane, in the units the kernel copies (16 bytes and single bytes), each lane's
// bytes at the same place of the slot in every chunk whatever its length, every lane busy from
// one granule per lane up, and a message of one chunk taking exactly the lanes that own its bytes.

#include <gtest/gtest.h>

#include <vector>

#include "ranks/p2p_kernels.cuh"

namespace gpupeer {
namespace {

// Which lane moves each byte of a chunk of `len`, as the kernel walks its lanes' units of
// `unit` bytes (P2pLayout::laneUnit; with 16, the bytes past the last whole unit as laneOf
// says); -1 for a byte no lane moves, -2 for one moved twice.
std::vector<int> movers(std::size_t len, std::size_t unit) {
  std::vector<int> by(len, -1);
  auto mark = [&](std::size_t at, int lane) { by[at] = by[at] == -1 ? lane : -2; };
  const std::size_t whole = len / unit * unit;
  for (int lane = 0; lane < kP2pLanes; ++lane) {
    for (std::size_t i = 0;; ++i) {
      const std::size_t at = P2pLayout::laneUnit(lane, i, unit);
      if (at >= whole) break;
      for (std::size_t b = 0; b < unit; ++b) mark(at + b, lane);
    }
    for (std::size_t at = whole; at < len; ++at)
      if (P2pLayout::laneOf(at) == lane) mark(at, lane);
  }
  return by;
}

TEST(P2pLayout, EveryByteOfEveryChunkIsMovedByExactlyTheLaneThatOwnsIt) {
  for (std::size_t unit : {std::size_t{16}, std::size_t{1}})
    for (std::size_t len :
         {std::size_t{0}, std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{255}, std::size_t{4095},
          std::size_t{4097}, std::size_t{131072}, std::size_t{131073}, std::size_t{2097154}, std::size_t{4} << 20}) {
      const std::vector<int> by = movers(len, unit);
      for (std::size_t at = 0; at < len; ++at)
        ASSERT_EQ(by[at], P2pLayout::laneOf(at)) << "byte " << at << " of " << len << " in units of " << unit;
    }
}

// Lanes move on independently: a lane must find its bytes where they were in the chunk before,
// or a lane ahead writes a short chunk's bytes that a slower lane has not read yet (a short
// last chunk of one send followed by the next send into the same slot).
TEST(P2pLayout, EachLaneOwnsTheSameBytesOfEverySlotWhateverTheChunkLength) {
  const std::vector<int> full = movers(std::size_t{4} << 20, 16);
  for (std::size_t len : {std::size_t{1}, std::size_t{100000}, std::size_t{2097154}, std::size_t{3} << 20}) {
    const std::vector<int> by = movers(len, 16);
    for (std::size_t at = 0; at < len; ++at) ASSERT_EQ(by[at], full[at]) << "byte " << at << " of " << len;
  }
}

TEST(P2pLayout, EveryLaneHasWorkFromOneGranulePerLane) {
  const std::vector<int> by = movers(kP2pLanes * kP2pGranuleBytes, 16);
  std::vector<std::size_t> bytes(kP2pLanes);
  for (int lane : by) ++bytes[lane];
  for (int lane = 0; lane < kP2pLanes; ++lane) EXPECT_EQ(bytes[lane], kP2pGranuleBytes) << "lane " << lane;
}

// A lane that skips a message must own none of its bytes, and every lane that owns some must
// take part; a message of several chunks takes every lane (its later chunks fill the slot).
TEST(P2pLayout, AMessageTakesExactlyTheLanesThatOwnItsBytes) {
  const P2pLayout l{2, std::size_t{4} << 20};
  EXPECT_EQ(l.lanesFor(0), 0);
  EXPECT_EQ(l.lanesFor(1), 1);
  EXPECT_EQ(l.lanesFor(kP2pGranuleBytes), 1);
  EXPECT_EQ(l.lanesFor(kP2pGranuleBytes + 1), 2);
  EXPECT_EQ(l.lanesFor(l.slotBytes + 1), kP2pLanes);
  for (std::size_t len : {std::size_t{1}, std::size_t{4097}, std::size_t{100000}, kP2pLanes * kP2pGranuleBytes - 1,
                          kP2pLanes * kP2pGranuleBytes + 5, l.slotBytes}) {
    std::vector<bool> owns(kP2pLanes, false);
    for (int lane : movers(len, 16)) owns[lane] = true;
    for (int lane = 0; lane < kP2pLanes; ++lane)
      EXPECT_EQ(owns[lane], lane < l.lanesFor(len)) << "lane " << lane << " of a message of " << len;
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
