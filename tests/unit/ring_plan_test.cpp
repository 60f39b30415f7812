// The ring's schedule run on host memory: each rank's own stream and side stream execute their
// steps in order, a wait only once its signal is there, the streams taking turns in random
// orders. Signals are RankSignals' events: a wait meets the post enqueued last before it by that
// sender with that number. Every order must end without a deadlock or a wrong result.
#include "collectives/ring_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "collectives/signal_numbers.hpp"
#include "host_rank_memory.hpp"

namespace gpupeer {
namespace {

using testing::Word;
constexpr std::size_t kEs = sizeof(Word);

struct Case {
  CollOp op;
  int n;
  std::size_t count;
  int root;
  bool inPlace;
  RedOp redop;
};

// One rank's memory: its send and receive buffers in one array, and its scratch.
struct RankMemory : testing::HostRankMemory {
  std::vector<Word> scratch;
};

using testing::hostInput;
Word combine(RedOp op, Word a, Word b) { return op == RedOp::kMax ? std::max(a, b) : a + b; }

class Simulation {
 public:
  Simulation(const Case& k, std::size_t scratchBytes) : k_(k), ranks_(k.n) {
    for (int r = 0; r < k.n; ++r) {
      static_cast<testing::HostRankMemory&>(ranks_[r]) = testing::hostRankMemory(k.op, k.n, r, k.count, k.inPlace);
      ranks_[r].scratch.assign(scratchBytes / kEs, 0xdeadbeef);
    }
  }

  Word* place(const RingPlace& p) {
    RankMemory& m = ranks_[p.rank];
    EXPECT_EQ(p.byte % kEs, 0u);
    switch (p.buffer) {
      case RingBuffer::kSend: return m.mem.data() + m.sendAt + p.byte / kEs;
      case RingBuffer::kRecv: return m.mem.data() + m.recvAt + p.byte / kEs;
      case RingBuffer::kScratch: return m.scratch.data() + p.byte / kEs;
    }
    return nullptr;
  }

  // Runs `steps` (in enqueue order) with the streams taking turns at random. Returns "" or what
  // went wrong.
  std::string run(const std::vector<RingStep>& steps, unsigned seed) {
    const int n = k_.n;
    std::vector<std::vector<int>> queue(2 * n);   // stream 2r: own, 2r+1: side
    std::map<std::pair<int, int>, int> lastPost;  // (sender, flag) -> step
    std::map<std::pair<int, int>, int> lastHandOff;
    std::vector<int> meets(steps.size(), -1);  // the post a wait meets
    for (int i = 0; i < static_cast<int>(steps.size()); ++i) {
      const RingStep& s = steps[i];
      queue[2 * s.rank + (s.side ? 1 : 0)].push_back(i);
      if (s.action == RingAction::kPost) lastPost[{s.rank, s.flag}] = i;
      if (s.action == RingAction::kHandOff) lastHandOff[{s.rank, s.flag}] = i;
      if (s.action == RingAction::kWait) {
        auto p = lastPost.find({s.peer, s.flag});
        if (p == lastPost.end()) return "a wait enqueued before any post it could meet";
        meets[i] = p->second;
      }
      if (s.action == RingAction::kTakeOver) {
        auto p = lastHandOff.find({s.rank, s.flag});
        if (p == lastHandOff.end()) return "a take-over enqueued before its hand-off";
        meets[i] = p->second;
      }
    }
    std::vector<bool> done(steps.size(), false);
    std::vector<std::size_t> head(2 * n, 0);
    std::mt19937 rng(seed);
    for (;;) {
      std::vector<int> runnable;
      bool left = false;
      for (int q = 0; q < 2 * n; ++q) {
        if (head[q] == queue[q].size()) continue;
        left = true;
        const RingStep& s = steps[queue[q][head[q]]];
        const bool waits = s.action == RingAction::kTakeOver || s.action == RingAction::kWait;
        if (!waits || done[meets[queue[q][head[q]]]]) runnable.push_back(q);
      }
      if (!left) break;
      if (runnable.empty()) return "deadlock: every stream with steps left waits";
      const int q = runnable[std::uniform_int_distribution<std::size_t>(0, runnable.size() - 1)(rng)];
      const int i = queue[q][head[q]++];
      const RingStep& s = steps[i];
      switch (s.action) {
        case RingAction::kCopy:
          if (s.dst.rank != s.rank && s.dst.rank != (s.rank + 1) % n) return "a copy to a rank that is not the next";
          std::copy_n(place(s.src), s.elements, place(s.dst));
          break;
        case RingAction::kReduce: {
          const Word* a = place(s.src);
          const Word* b = place(s.mine);
          Word* out = place(s.dst);
          for (std::size_t e = 0; e < s.elements; ++e) out[e] = combine(k_.redop, a[e], b[e]);
          break;
        }
        case RingAction::kPost:
        case RingAction::kWait:
        case RingAction::kHandOff:
        case RingAction::kTakeOver: break;
      }
      done[i] = true;
    }
    return "";
  }

  // Elements of rank r's output that differ from the reference.
  std::size_t wrong(int r) {
    const int n = k_.n;
    std::size_t bad = 0;
    auto reduced = [&](std::size_t i) {
      Word acc = hostInput(0, i);
      for (int k = 1; k < n; ++k) acc = combine(k_.redop, acc, hostInput(k, i));
      return acc;
    };
    const std::size_t out = collectiveOutputElements(k_.op, k_.count, n);
    for (std::size_t i = 0; i < out; ++i) {
      Word want = 0;
      switch (k_.op) {
        case CollOp::kBroadcast: want = hostInput(k_.root, i); break;
        case CollOp::kAllGather: want = hostInput(static_cast<int>(i / k_.count), i % k_.count); break;
        case CollOp::kReduceScatter: want = reduced(r * k_.count + i); break;
        case CollOp::kReduce:
        case CollOp::kAllReduce: want = reduced(i); break;
        default: break;
      }
      if (ranks_[r].mem[ranks_[r].recvAt + i] != want) ++bad;
    }
    return bad;
  }

 private:
  Case k_;
  std::vector<RankMemory> ranks_;
};

// Plans `k` like runRing (own copies, then each phase's steps) and runs it under `seeds` orders.
void check(const Case& k, std::size_t chunkBytes, std::size_t scratchBytes, int seeds) {
  SCOPED_TRACE(::testing::Message() << collOpName(k.op) << " n=" << k.n << " count=" << k.count << " root=" << k.root
                                    << (k.inPlace ? " in place" : "") << " chunk " << chunkBytes << " scratch "
                                    << scratchBytes);
  auto phases = ringPhases(k.op, k.n, k.count, k.root);
  ASSERT_TRUE(phases.isOk()) << phases.status().toString();
  for (int seed = 0; seed < seeds; ++seed) {
    Simulation sim(k, scratchBytes);
    for (const RingPhase& phase : phases.value()) {
      auto plan = planRing(k.n, phase, kEs, chunkBytes, scratchBytes);
      ASSERT_TRUE(plan.isOk()) << plan.status().toString();
      for (const RingStep& s : plan.value().steps) {
        if (s.action == RingAction::kPost || s.action == RingAction::kWait) {
          ASSERT_TRUE(s.peer == (s.rank + 1) % k.n || s.peer == (s.rank + k.n - 1) % k.n)
              << "signal to a non-neighbour";
          ASSERT_LT(s.flag, kSignalsPerSender);
          ASSERT_GE(s.flag, kLanded);
        }
      }
      std::vector<RingStep> steps;
      if (!phase.readsOutput) steps = ringOwnCopies(k.op, k.n, k.count, k.root, kEs);
      steps.insert(steps.end(), plan.value().steps.begin(), plan.value().steps.end());
      const std::string failure = sim.run(steps, static_cast<unsigned>(seed));
      ASSERT_EQ(failure, "") << "order " << seed;
    }
    for (int r = 0; r < k.n; ++r) {
      if (k.op == CollOp::kReduce && r != k.root) continue;
      ASSERT_EQ(sim.wrong(r), 0u) << "rank " << r << ", order " << seed;
    }
  }
}

TEST(RingPlan, EveryOperationDeliversInEveryOrder) {
  // Chunks of 64 bytes and 3 scratch positions: reduce legs reuse each position many times.
  for (CollOp op :
       {CollOp::kBroadcast, CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kReduce, CollOp::kAllReduce})
    for (int n : {2, 3, 4, 8})
      for (std::size_t count : {std::size_t{1}, std::size_t{5}, std::size_t{1001}})
        for (bool inPlace : {false, true})
          for (int root : {0, n - 1}) {
            if (root && op != CollOp::kBroadcast && op != CollOp::kReduce) continue;
            check({op, n, count, root, inPlace, count % 2 ? RedOp::kSum : RedOp::kMax}, 64, 3 * 256, 4);
          }
}

TEST(RingPlan, LargeChunksAndTheDefaultScratchShapes) {
  // One chunk per leg; the chunk capped to a quarter of the scratch; copy legs capped to 64
  // chunks per link (8 legs: 8 chunks each).
  check({CollOp::kAllReduce, 4, 100003, 0, false, RedOp::kSum}, 1u << 20, 4u << 20, 2);
  check({CollOp::kReduce, 3, 100003, 2, true, RedOp::kSum}, 1u << 20, 64u << 10, 2);
  check({CollOp::kAllGather, 8, 4097, 0, false, RedOp::kSum}, 64, 1u << 20, 2);
  auto plan = planRing(8, ringPhases(CollOp::kAllGather, 8, 4097, 0).value()[0], kEs, 64, 1u << 20);
  ASSERT_TRUE(plan.isOk());
  EXPECT_EQ(plan.value().chunks, 8u);
  auto reduce = planRing(3, ringPhases(CollOp::kReduce, 3, 100003, 0).value()[0], kEs, 1u << 20, 64u << 10);
  ASSERT_TRUE(reduce.isOk());
  EXPECT_LE(reduce.value().chunkBytes, (64u << 10) / 4 + 256);
  EXPECT_EQ(reduce.value().positions, 4);
}

TEST(RingPlan, RefusesWhatItCannotDo) {
  EXPECT_EQ(ringPhases(CollOp::kAllToAll, 4, 8, 0).status().code(), ErrorCode::kUnsupported);
  EXPECT_EQ(ringPhases(CollOp::kSendRecv, 4, 8, 0).status().code(), ErrorCode::kUnsupported);
  EXPECT_EQ(ringPhases(CollOp::kAllReduce, 1, 8, 0).status().code(), ErrorCode::kInvalidArgument);
  // A scratch that holds fewer than two 256-byte positions.
  RingPhase phase = ringPhases(CollOp::kReduce, 2, 1000, 0).value()[0];
  EXPECT_EQ(planRing(2, phase, kEs, 64, 300).status().code(), ErrorCode::kInvalidArgument);
  // An all-reduce of fewer elements than ranks leaves out the empty segments' legs.
  auto few = ringPhases(CollOp::kAllReduce, 8, 3, 0);
  ASSERT_TRUE(few.isOk());
  EXPECT_EQ(few.value()[0].legs.size(), 3u);
  EXPECT_EQ(few.value()[1].legs.size(), 3u);
  check({CollOp::kAllReduce, 8, 3, 0, true, RedOp::kSum}, 64, 3 * 256, 4);
}

}  // namespace
}  // namespace gpupeer
