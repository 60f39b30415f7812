// The point-to-point kernel's lanes deal each chunk between them in granules: every byte moved
// by exactly one lane, in the units the kernel copies (16 bytes and single bytes), each lane's
// bytes at the same place of the slot in every chunk whatever its length, every lane busy from
// one granule per lane up, and a message of one chunk taking exactly the lanes that own its bytes.

#include <gtest/gtest.h>

#include <algorithm>
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
  EXPECT_EQ(l.headerOffset(0, 0, 0), (8u << 20) + 4 * 4 * kP2pLanes * sizeof(std::uint32_t));
  EXPECT_EQ(l.slotOffset(3, 1), 7u << 20);
}

// Each sender, slot and lane has a 64-bit header of its own after the words, 8-byte aligned,
// and the memory ends with the last one.
TEST(P2pLayout, ChunkHeadersFollowTheWordsOnePerSenderSlotAndLane) {
  const P2pLayout l{4, 1u << 20};
  const std::size_t first = l.wordsOffset() + 4 * 4 * kP2pLanes * sizeof(std::uint32_t);
  std::vector<std::size_t> at;
  for (int s = 0; s < 4; ++s)
    for (int slot = 0; slot < 2; ++slot)
      for (int lane = 0; lane < kP2pLanes; ++lane) at.push_back(l.headerOffset(s, slot, lane));
  std::sort(at.begin(), at.end());
  EXPECT_EQ(at.front(), first);
  for (std::size_t i = 0; i < at.size(); ++i) ASSERT_EQ(at[i], first + i * 8) << "header " << i;
  EXPECT_EQ(l.bytes(), at.back() + 8);
}

TEST(P2pBlocksPerTask, EveryLaneOfTheLargestMessageUntilTheBudgetIsReached) {
  EXPECT_EQ(p2pBlocksPerTask(0, kP2pLanes, 198), 0);
  EXPECT_EQ(p2pBlocksPerTask(2, 0, 198), 0);
  EXPECT_EQ(p2pBlocksPerTask(2, kP2pLanes, 198), kP2pLanes);
  EXPECT_EQ(p2pBlocksPerTask(2, 5, 198), 5);
  EXPECT_EQ(p2pBlocksPerTask(6, kP2pLanes, 198), 33);
  EXPECT_EQ(p2pBlocksPerTask(16, kP2pLanes, 198), 12);
  EXPECT_EQ(p2pBlocksPerTask(16, kP2pLanes, 10), 1);  // never none
  for (int tasks = 1; tasks <= kMaxP2pTasks; ++tasks)
    for (int budget : {16, 66, 198, 1000}) {
      const int b = p2pBlocksPerTask(tasks, kP2pLanes, budget);
      ASSERT_LE(tasks * b, std::max(budget, tasks)) << tasks << " tasks, budget " << budget;
      ASSERT_GE(b, 1);
    }
}

// A model of one group on n ranks: each rank sends to and receives from every rank (itself
// included) a message of `chunks` chunks, its nearest peers first, as the all-to-all GPU test
// does. Each GPU holds `holds` blocks at once and starts them in index order; a block moves its
// lanes (b, b + blocks per task, ...) in increasing order, one chunk per step where the other
// end allows it (a send's chunk k once the receiver took chunk k - 2, a receive's once it was
// sent). True where every lane of every rank finishes.
bool groupFinishes(int n, int chunks, int holds, int blocksPerTask) {
  struct Block {
    int task, lane;  // the lane it moves now
  };
  const int tasks = 2 * n;
  // done[r][task][lane]: chunks moved; task 2d is the send to peer r + d + 1, 2d + 1 the receive.
  std::vector<std::vector<std::vector<int>>> done(n, std::vector<std::vector<int>>(tasks, std::vector<int>(kP2pLanes)));
  auto taskOf = [&](int r, int peer, bool send) { return 2 * ((peer - r + n - 1) % n) + (send ? 0 : 1); };
  std::vector<std::vector<Block>> resident(n);
  std::vector<int> next(n, 0);  // the next block to start
  const int blocks = tasks * blocksPerTask;
  for (bool moved = true; moved;) {
    moved = false;
    for (int r = 0; r < n; ++r) {
      while (static_cast<int>(resident[r].size()) < holds && next[r] < blocks) {
        resident[r].push_back({next[r] / blocksPerTask, next[r] % blocksPerTask});
        ++next[r];
        moved = true;
      }
      for (Block& b : resident[r]) {
        if (b.lane >= kP2pLanes) continue;
        const bool send = b.task % 2 == 0;
        const int peer = (r + b.task / 2 + 1) % n;
        int& mine = done[r][b.task][b.lane];
        const int theirs = done[peer][taskOf(peer, r, !send)][b.lane];
        if (send ? theirs >= mine - 1 : theirs > mine) ++mine, moved = true;
        if (mine == chunks) b.lane += blocksPerTask;
      }
      std::erase_if(resident[r], [](const Block& b) { return b.lane >= kP2pLanes; });
    }
  }
  for (int r = 0; r < n; ++r)
    if (next[r] < 2 * n * blocksPerTask || !resident[r].empty()) return false;
  return true;
}

TEST(P2pBlocksPerTask, AllToAllOfEightRanksFinishesWhereOneBlockPerLaneDoesNot) {
  const int holds = 264;  // an H200: 132 SMs, two blocks of the kernel (64 registers a thread) each
  EXPECT_FALSE(groupFinishes(8, 3, holds, kP2pLanes));
  EXPECT_TRUE(groupFinishes(8, 3, holds, p2pBlocksPerTask(16, kP2pLanes, holds / 2)));
  EXPECT_TRUE(groupFinishes(4, 3, holds, p2pBlocksPerTask(8, kP2pLanes, holds / 2)));
  EXPECT_TRUE(groupFinishes(2, 3, holds, p2pBlocksPerTask(4, kP2pLanes, holds / 2)));
}

}  // namespace
}  // namespace gpupeer
