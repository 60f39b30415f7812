// The pull kernel's parts run on host memory: every rank's part, unit by unit (read every
// source, then write every target), against the operation's definition, in place and out of
// place. Owners run at once on the GPU, so the test also checks that no element one owner
// writes is read or written by another, and where the split plan cuts the message.
#include "collectives/pull_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "host_rank_memory.hpp"

namespace gpupeer {
namespace {

using testing::Word;
using RankMemory = testing::HostRankMemory;

using testing::hostInput;

struct Case {
  CollOp op;
  int n;
  std::size_t count;
  int root;
  bool inPlace;
  bool split;
};

std::string describe(const Case& k) {
  return std::string(collOpName(k.op)) + " n=" + std::to_string(k.n) + " count=" + std::to_string(k.count) +
         " root=" + std::to_string(k.root) + (k.inPlace ? " in place" : " out of place") +
         (k.split ? " split" : " pull");
}

struct Outcome {
  std::vector<RankMemory> ranks;
  std::string race;  // "" or the first element two owners share with a write
};

Outcome run(const Case& k) {
  const std::size_t in = collectiveInputElements(k.op, k.count, k.n),
                    out = collectiveOutputElements(k.op, k.count, k.n);
  Outcome o;
  o.ranks.resize(k.n);
  // A broadcast's non-root ranks have no input; in place their buffer starts as garbage.
  for (int r = 0; r < k.n; ++r)
    o.ranks[r] = testing::hostRankMemory(k.op, k.n, r, k.count, k.inPlace, k.op != CollOp::kBroadcast || r == k.root);
  const std::vector<PullPart> parts = planPull(k.op, k.n, k.root, k.count, sizeof(Word), k.split);
  EXPECT_EQ(static_cast<int>(parts.size()), k.n);
  // (rank, element) -> owners that read it / write it.
  std::map<std::pair<int, std::size_t>, std::set<int>> readers, writers;
  for (int owner = 0; owner < k.n; ++owner) {
    const PullPart& p = parts[owner];
    for (std::size_t i = 0; i < p.len; ++i) {
      Word v = 0;
      for (int s = 0; s < p.sourceCount; ++s) {
        const PullRef& src = p.sources[s];
        EXPECT_LT(src.offset + i, in) << describe(k);
        const std::size_t at = o.ranks[src.rank].sendAt + src.offset + i;
        readers[{src.rank, at}].insert(owner);
        v = s == 0 ? o.ranks[src.rank].mem[at] : v + o.ranks[src.rank].mem[at];
      }
      for (int t = 0; t < p.targetCount; ++t) {
        const PullRef& dst = p.targets[t];
        EXPECT_LT(dst.offset + i, out) << describe(k);
        const std::size_t at = o.ranks[dst.rank].recvAt + dst.offset + i;
        // As runPull does: a copy onto its own source is left out (in place, the data is there).
        if (p.sourceCount == 1 && dst.rank == p.sources[0].rank &&
            at == o.ranks[dst.rank].sendAt + p.sources[0].offset + i)
          continue;
        writers[{dst.rank, at}].insert(owner);
        o.ranks[dst.rank].mem[at] = v;
      }
    }
  }
  for (const auto& [where, who] : writers) {
    std::set<int> touching = who;
    if (auto it = readers.find(where); it != readers.end()) touching.insert(it->second.begin(), it->second.end());
    if (who.size() > 1 || touching.size() > 1) {
      o.race = "rank " + std::to_string(where.first) + " element " + std::to_string(where.second) +
               " written by one owner and touched by another";
      break;
    }
  }
  return o;
}

// The operation's definition (sums of distinct inputs, so a wrong source shows).
void checkResult(const Case& k, const Outcome& o) {
  auto sum = [&](std::size_t i) {
    Word v = 0;
    for (int r = 0; r < k.n; ++r) v += hostInput(r, i);
    return v;
  };
  for (int r = 0; r < k.n; ++r) {
    const RankMemory& m = o.ranks[r];
    const Word* got = m.mem.data() + m.recvAt;
    for (std::size_t i = 0; i < k.count; ++i) {
      switch (k.op) {
        case CollOp::kAllReduce: ASSERT_EQ(got[i], sum(i)) << describe(k) << " rank " << r << " element " << i; break;
        case CollOp::kReduceScatter:
          ASSERT_EQ(got[i], sum(r * k.count + i)) << describe(k) << " rank " << r << " element " << i;
          break;
        case CollOp::kAllGather:
          for (int q = 0; q < k.n; ++q)
            ASSERT_EQ(got[q * k.count + i], hostInput(q, i)) << describe(k) << " rank " << r << " chunk " << q;
          break;
        case CollOp::kBroadcast:
          ASSERT_EQ(got[i], hostInput(k.root, i)) << describe(k) << " rank " << r << " element " << i;
          break;
        case CollOp::kReduce:
          if (r == k.root) {
            ASSERT_EQ(got[i], sum(i)) << describe(k) << " element " << i;
          }
          break;
        default: FAIL() << describe(k);
      }
    }
  }
}

TEST(PullPlan, EveryPartRunOnHostMemoryGivesTheOperationWithoutRaces) {
  int cases = 0;
  for (bool split : {false, true})
    for (CollOp op :
         {CollOp::kAllReduce, CollOp::kReduceScatter, CollOp::kAllGather, CollOp::kBroadcast, CollOp::kReduce}) {
      if (!split && (op == CollOp::kAllGather || op == CollOp::kBroadcast)) continue;  // pull does not serve them
      for (int n : {2, 3, 4, 8})
        for (std::size_t count : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{17}, std::size_t{1000}})
          for (bool inPlace : {false, true})
            for (int root : {0, n - 1}) {
              if (root && op != CollOp::kBroadcast && op != CollOp::kReduce) continue;
              // Pull cannot do an in-place all-reduce (the next test shows why).
              if (!split && inPlace && op == CollOp::kAllReduce) continue;
              const Case k{op, n, count, root, inPlace, split};
              const Outcome o = run(k);
              EXPECT_EQ(o.race, "") << describe(k);
              checkResult(k, o);
              ++cases;
            }
    }
  // 40 arrangements per unrooted operation, 80 rooted: pull 20 + 40 + 80, split 3 x 40 + 2 x 80.
  EXPECT_EQ(cases, 140 + 280);
}

TEST(PullPlan, TheRaceCheckSeesPullOverwritingAnInPlaceAllReduceInput) {
  // Every rank writes its whole output, which in place is the input its peers still read.
  const Outcome o = run({CollOp::kAllReduce, 2, 8, 0, true, false});
  EXPECT_NE(o.race, "");
}

TEST(PullPlan, SplitCutsAt16BytesAndReducesInRankOrder) {
  for (std::size_t es : {std::size_t{1}, std::size_t{2}, std::size_t{4}, std::size_t{8}})
    for (CollOp op : {CollOp::kAllReduce, CollOp::kBroadcast, CollOp::kReduce})
      for (int n : {2, 3, 4, 8}) {
        const std::size_t count = 1000003;
        const std::vector<PullPart> parts = planPull(op, n, 1, count, es, true);
        std::vector<std::pair<std::size_t, std::size_t>> spans;
        for (int r = 0; r < n; ++r) {
          const PullPart& p = parts[r];
          if (op != CollOp::kAllReduce && r == 1) {
            if (op == CollOp::kReduce) {
              EXPECT_EQ(p.len, 0u) << "the root owns nothing";
            } else {
              // The broadcast's root only copies locally.
              EXPECT_EQ(p.len, count);
              ASSERT_EQ(p.sourceCount, 1);
              ASSERT_EQ(p.targetCount, 1);
              EXPECT_EQ(p.sources[0].rank, 1);
              EXPECT_EQ(p.targets[0].rank, 1);
            }
            continue;
          }
          // No owner sends to the root over its port but the reduce's result.
          for (int t = 0; t < p.targetCount; ++t) {
            if (op == CollOp::kBroadcast) {
              EXPECT_NE(p.targets[t].rank, 1);
            }
          }
          ASSERT_GT(p.len, 0u);
          const std::size_t begin = p.targets[0].offset;
          EXPECT_EQ(begin * es % 16, 0u) << collOpName(op) << " es=" << es << " rank " << r;
          spans.push_back({begin, begin + p.len});
          if (op != CollOp::kBroadcast) {
            ASSERT_EQ(p.sourceCount, n);
            for (int s = 0; s < n; ++s) EXPECT_EQ(p.sources[s].rank, s);
          }
          // Targets start with the owner's own rank or the one after it, not with rank 0.
          if (op == CollOp::kAllReduce) {
            EXPECT_EQ(p.targets[0].rank, r);
          }
        }
        // The parts cover the message once, each owner's a similar share.
        std::sort(spans.begin(), spans.end());
        std::size_t at = 0, least = count, most = 0;
        for (auto [b, e] : spans) {
          EXPECT_EQ(b, at);
          at = e;
          least = std::min(least, e - b);
          most = std::max(most, e - b);
        }
        EXPECT_EQ(at, count);
        EXPECT_LE(most - least, 16 / es) << collOpName(op) << " n=" << n;
      }
}

TEST(PullPlan, PartsTooSmallToShareLeaveOwnersIdle) {
  // 3 floats are one 16-byte grain: one owner takes them all, the others only meet.
  const std::vector<PullPart> parts = planPull(CollOp::kAllReduce, 4, 0, 3, 4, true);
  int owners = 0;
  for (const PullPart& p : parts) {
    if (p.len == 0) {
      EXPECT_EQ(p.sourceCount, 0);
      EXPECT_EQ(p.targetCount, 0);
    } else {
      ++owners;
      EXPECT_EQ(p.len, 3u);
      EXPECT_EQ(p.targetCount, 4);
    }
  }
  EXPECT_EQ(owners, 1);
}

TEST(PullPlan, AGridOfABlockPerShareWithinTheMost) {
  EXPECT_EQ(pullBlocksFor(2u << 20, 132, 16u << 10), 128);   // 2 MiB in 16 KiB shares
  EXPECT_EQ(pullBlocksFor(64u << 20, 132, 64u << 10), 132);  // one per SM at most
  EXPECT_EQ(pullBlocksFor(100, 132, 64u << 10), 1);          // at least one
  EXPECT_EQ(pullBlocksFor(1u << 20, 0, 0), 1);               // nonsense limits still give a grid
}

TEST(PullPlan, AllReduceTakesSmallerSharesPerBlock) {
  constexpr std::size_t kMiB = 1u << 20;
  EXPECT_EQ(pullBlockBytesFor(CollOp::kAllReduce, 2, 1 * kMiB), 16u << 10);  // 2 MiB on 2 GPUs: 64 blocks
  EXPECT_EQ(pullBlockBytesFor(CollOp::kAllReduce, 2, 2 * kMiB), 32u << 10);  // 4 MiB: 64 blocks, not 128
  EXPECT_EQ(pullBlockBytesFor(CollOp::kAllReduce, 2, 4 * kMiB), 32u << 10);  // 8 MiB: 128 even blocks
  EXPECT_EQ(pullBlockBytesFor(CollOp::kAllReduce, 4, 4 * kMiB), 16u << 10);  // not measured on 3+ GPUs
  for (CollOp op : {CollOp::kReduceScatter, CollOp::kAllGather, CollOp::kBroadcast, CollOp::kReduce})
    EXPECT_EQ(pullBlockBytesFor(op, 2, 4 * kMiB), 64u << 10) << collOpName(op);
  for (CollOp op : {CollOp::kReduceScatter, CollOp::kAllGather})
    EXPECT_EQ(pullBlockBytesFor(op, 4, 4 * kMiB), 64u << 10) << collOpName(op);
}

TEST(PullPlan, ReduceAndBroadcastFromThreeGpusTakeFewerBlocksAsTheirPartsGrow) {
  constexpr std::size_t kMiB = 1u << 20;
  for (int ranks : {3, 4, 8}) {
    SCOPED_TRACE(ranks);
    for (CollOp op : {CollOp::kBroadcast, CollOp::kReduce})
      EXPECT_EQ(pullBlockBytesFor(op, ranks, kMiB - 16), 16u << 10) << collOpName(op);
    EXPECT_EQ(pullBlockBytesFor(CollOp::kReduce, ranks, kMiB), 128u << 10);
    EXPECT_EQ(pullBlockBytesFor(CollOp::kReduce, ranks, 2 * kMiB - 16), 128u << 10);
    EXPECT_EQ(pullBlockBytesFor(CollOp::kReduce, ranks, 2 * kMiB), 256u << 10);
    EXPECT_EQ(pullBlockBytesFor(CollOp::kReduce, ranks, 64 * kMiB), 256u << 10);
    EXPECT_EQ(pullBlockBytesFor(CollOp::kBroadcast, ranks, kMiB), 128u << 10);
    EXPECT_EQ(pullBlockBytesFor(CollOp::kBroadcast, ranks, 2 * kMiB), 256u << 10);
    EXPECT_EQ(pullBlockBytesFor(CollOp::kBroadcast, ranks, 8 * kMiB - 16), 256u << 10);
  }
  // Broadcast by split: the longest part is the root's own copy, the whole message, so the
  // grids are those measured per message on 4 GPUs: 8 blocks at 2 MiB, 16 from 4 to 32 MiB,
  // blocks of 2 MiB from there (64 at 128 MiB).
  auto broadcastBlocks = [&](std::size_t bytes) {
    const std::size_t longest = longestPart(planPull(CollOp::kBroadcast, 4, 1, bytes / 4, 4, true)) * 4;
    EXPECT_EQ(longest, bytes);
    return pullBlocksFor(longest, 132, pullBlockBytesFor(CollOp::kBroadcast, 4, longest));
  };
  EXPECT_EQ(broadcastBlocks(2 * kMiB), 8);
  EXPECT_EQ(broadcastBlocks(4 * kMiB), 16);
  EXPECT_EQ(broadcastBlocks(8 * kMiB), 16);
  EXPECT_EQ(broadcastBlocks(16 * kMiB), 16);
  EXPECT_EQ(broadcastBlocks(32 * kMiB), 16);
  EXPECT_EQ(broadcastBlocks(128 * kMiB), 64);
  // 32 MiB reduced on 4 GPUs: parts of 32/3 MiB, 42 blocks of 256 KiB (132 of 64 KiB before).
  const std::size_t part = (32 * kMiB / 3 + 15) / 16 * 16;
  EXPECT_EQ(pullBlocksFor(part, 132, pullBlockBytesFor(CollOp::kReduce, 4, part)), 42);
}

TEST(PullPlan, TilesOnlyWhereEachBlockOwnsHalfAMiBOrMore) {
  constexpr std::size_t kMiB = 1u << 20;
  // 2 GPUs, reduce by pull: the root's part is the whole message, 132 blocks.
  EXPECT_EQ(pullTileBytesFor(128 * kMiB, 132), 64u << 10);
  EXPECT_EQ(pullTileBytesFor(66 * kMiB, 132), 64u << 10);  // exactly 512 KiB per block
  EXPECT_EQ(pullTileBytesFor(64 * kMiB, 132), 0u);         // 496 KiB per block
  EXPECT_EQ(pullTileBytesFor(2 * kMiB / 3, 10), 0u);       // few blocks: uneven tiles
  EXPECT_EQ(pullTileBytesFor(kMiB, 0), 0u);
}

}  // namespace
}  // namespace gpupeer
