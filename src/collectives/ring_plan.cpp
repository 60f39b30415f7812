#include "collectives/ring_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "collectives/signal_numbers.hpp"

namespace gpupeer {
namespace {

struct Chunking {
  std::size_t chunks = 1;
  std::size_t elements(const RingLeg& leg) const { return (leg.count + chunks - 1) / chunks; }
  std::size_t start(const RingLeg& leg, std::size_t j) const { return std::min(leg.count, j * elements(leg)); }
  std::size_t length(const RingLeg& leg, std::size_t j) const {
    return std::min(leg.count, (j + 1) * elements(leg)) - start(leg, j);
  }
};

// Chunks per leg: about `target` bytes each, at most `most`, and at most the shortest leg's
// elements (no leg has an empty chunk).
std::size_t chooseChunks(const std::vector<RingLeg>& legs, std::size_t es, std::size_t target, std::size_t most) {
  std::size_t longest = 0, shortest = SIZE_MAX;
  for (const RingLeg& l : legs) {
    longest = std::max(longest, l.count);
    shortest = std::min(shortest, l.count);
  }
  const std::size_t wanted = (longest * es + target - 1) / target;
  return std::max<std::size_t>(1, std::min({wanted, most, shortest}));
}

RingStep step(RingAction action, int rank, bool side) {
  RingStep s;
  s.action = action;
  s.rank = rank;
  s.side = side;
  return s;
}
RingStep signal(RingAction action, int rank, bool side, int peer, int flag) {
  RingStep s = step(action, rank, side);
  s.peer = peer;
  s.flag = flag;
  return s;
}

// Copy legs: the leg's first rank copies chunk j of its input into the next rank's output;
// each rank after it, once that chunk has landed, copies it on from its own output. Rank r's
// copies run on its side stream in the order (chunk, step): a chunk follows the one before it
// and every link carries one copy at a time. Chunks a link carries to a rank that forwards
// them are counted in the same order by sender and receiver: the k-th signals kLanded + k. The
// last hop's receiver forwards nothing; its stream waits for every peer's side stream at the
// end of the operation instead (endSideStreams).
void planCopyLegs(int n, const RingPhase& phase, std::size_t es, const Chunking& ch, RingPlan& plan) {
  std::vector<int> sent(n, 0), received(n, 0);
  for (std::size_t j = 0; j < ch.chunks; ++j)
    for (int s = 0; s < n - 1; ++s)
      for (const RingLeg& leg : phase.legs) {
        const std::size_t first = ch.start(leg, j), len = ch.length(leg, j);
        if (!len) continue;  // 5 elements in 4 chunks: 2, 2, 1 and none
        const int r = (leg.first + s) % n, to = (r + 1) % n;
        RingStep copy = step(RingAction::kCopy, r, true);
        copy.src = {RingBuffer::kRecv, r, (leg.to + first) * es};
        if (s == 0)
          copy.src = {phase.readsOutput ? RingBuffer::kRecv : RingBuffer::kSend, r, (leg.from + first) * es};
        else
          plan.steps.push_back(signal(RingAction::kWait, r, true, (r + n - 1) % n, kLanded + received[r]++));
        copy.dst = {RingBuffer::kRecv, to, (leg.to + first) * es};
        copy.elements = len;
        plan.steps.push_back(copy);
        if (s + 1 < n - 1) plan.steps.push_back(signal(RingAction::kPost, r, true, to, kLanded + sent[r]++));
      }
}

// Reduce legs: chunk j of the leg's first rank's input goes into the next rank's scratch at the
// link's next position; that rank adds its own input in place (on its own stream) and forwards
// the sum from there (on its side stream), until the leg's last rank writes the total into its
// output. A position is reused once its receiver has forwarded (or written out) what it held:
// signal "freed", posted only where the sender will wait for it, so no signal is left over.
void planReduceLegs(int n, const RingPhase& phase, std::size_t es, const Chunking& ch, RingPlan& plan) {
  const int positions = plan.positions;
  std::vector<int> total(n, 0);  // chunks per link r -> r+1
  for (const RingLeg& leg : phase.legs)
    for (std::size_t j = 0; j < ch.chunks; ++j)
      if (ch.length(leg, j))
        for (int s = 0; s < n - 1; ++s) ++total[(leg.first + s) % n];
  auto position = [&](int r, int item) {
    return RingPlace{RingBuffer::kScratch, r, static_cast<std::size_t>(item % positions) * plan.chunkBytes};
  };
  std::vector<int> sent(n, 0), received(n, 0);
  for (std::size_t j = 0; j < ch.chunks; ++j)
    for (int s = 0; s < n; ++s)
      for (const RingLeg& leg : phase.legs) {
        const std::size_t first = ch.start(leg, j), len = ch.length(leg, j);
        if (!len) continue;
        const int r = (leg.first + s) % n, prev = (r + n - 1) % n, to = (r + 1) % n;
        const RingPlace mine{RingBuffer::kSend, r, (leg.from + first) * es};
        RingPlace outgoing = mine;
        int in = -1;  // the chunk this rank received (none at the leg's start)
        if (s > 0) {
          in = received[r]++;
          const int slot = in % positions;
          plan.steps.push_back(signal(RingAction::kWait, r, false, prev, kLanded + slot));
          RingStep reduce = step(RingAction::kReduce, r, false);
          reduce.src = position(r, in);
          reduce.mine = mine;
          reduce.last = s == n - 1;
          reduce.dst = reduce.last ? RingPlace{RingBuffer::kRecv, r, (leg.to + first) * es} : position(r, in);
          reduce.elements = len;
          plan.steps.push_back(reduce);
          if (reduce.last) {
            if (in + positions < total[prev])
              plan.steps.push_back(signal(RingAction::kPost, r, false, prev, freedFlag(slot)));
            continue;
          }
          plan.steps.push_back(signal(RingAction::kHandOff, r, false, -1, slot));
          plan.steps.push_back(signal(RingAction::kTakeOver, r, true, -1, slot));
          outgoing = position(r, in);
        }
        const int item = sent[r]++, slot = item % positions;
        if (item >= positions) plan.steps.push_back(signal(RingAction::kWait, r, true, to, freedFlag(slot)));
        RingStep copy = step(RingAction::kCopy, r, true);
        copy.src = outgoing;
        copy.dst = position(to, item);
        copy.elements = len;
        plan.steps.push_back(copy);
        plan.steps.push_back(signal(RingAction::kPost, r, true, to, kLanded + slot));
        if (in >= 0 && in + positions < total[prev])
          plan.steps.push_back(signal(RingAction::kPost, r, true, prev, freedFlag(in % positions)));
      }
}

}  // namespace

Result<std::vector<RingPhase>> ringPhases(CollOp op, int n, std::size_t count, int root) {
  if (n < 2) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("a ring needs 2 ranks or more, not {}", n));
  std::vector<RingPhase> phases(1);
  std::vector<RingLeg>& legs = phases[0].legs;
  switch (op) {
    case CollOp::kBroadcast: legs.push_back({root, 0, 0, count}); break;
    case CollOp::kAllGather:
      for (int r = 0; r < n; ++r) legs.push_back({r, 0, r * count, count});
      break;
    case CollOp::kReduce:
      phases[0].kind = RingLegKind::kReduce;
      legs.push_back({(root + 1) % n, 0, 0, count});
      break;
    case CollOp::kReduceScatter:
      phases[0].kind = RingLegKind::kReduce;
      for (int r = 0; r < n; ++r) legs.push_back({(r + 1) % n, r * count, 0, count});
      break;
    case CollOp::kAllReduce: {
      // Segment r (the first count % n one element longer) is reduced into rank r's output,
      // then copied from there into every other rank's.
      phases[0].kind = RingLegKind::kReduce;
      phases.push_back({RingLegKind::kCopy, {}, true});
      const std::size_t share = count / n, rest = count % n;
      std::size_t offset = 0;
      for (int r = 0; r < n; ++r) {
        const std::size_t len = share + (static_cast<std::size_t>(r) < rest ? 1 : 0);
        phases[0].legs.push_back({(r + 1) % n, offset, offset, len});
        phases[1].legs.push_back({r, offset, offset, len});
        offset += len;
      }
      break;
    }
    case CollOp::kAllToAll:
    case CollOp::kSendRecv:
      return GPUPEER_ERROR(ErrorCode::kUnsupported, fmt::format("the ring does not do {}", collOpName(op)));
  }
  for (RingPhase& p : phases)
    p.legs.erase(std::remove_if(p.legs.begin(), p.legs.end(), [](const RingLeg& l) { return l.count == 0; }),
                 p.legs.end());
  return phases;
}

Result<RingPlan> planRing(int n, const RingPhase& phase, std::size_t es, std::size_t targetChunkBytes,
                          std::size_t scratchBytes) {
  RingPlan plan;
  if (phase.legs.empty()) return plan;
  if (n < 2 || es == 0 || targetChunkBytes == 0)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "a ring plan needs 2 ranks or more, an element size and a chunk");
  Chunking ch;
  if (phase.kind == RingLegKind::kCopy) {
    ch.chunks =
        chooseChunks(phase.legs, es, targetChunkBytes, std::max<std::size_t>(1, kMaxCePositions / phase.legs.size()));
    plan.chunks = ch.chunks;
    planCopyLegs(n, phase, es, ch, plan);
    return plan;
  }
  ch.chunks =
      chooseChunks(phase.legs, es, std::min(targetChunkBytes, std::max<std::size_t>(scratchBytes / 4, 1)), SIZE_MAX);
  std::size_t chunkBytes = 0;
  for (const RingLeg& leg : phase.legs) chunkBytes = std::max(chunkBytes, ch.elements(leg) * es);
  plan.chunkBytes = (chunkBytes + 255) / 256 * 256;  // positions 256-byte aligned: vector loads
  plan.positions = static_cast<int>(std::min<std::size_t>(kMaxCePositions, scratchBytes / plan.chunkBytes));
  if (plan.positions < 2)
    return GPUPEER_ERROR(
        ErrorCode::kInvalidArgument,
        fmt::format("ring: {} bytes of scratch hold fewer than two chunks of {} bytes", scratchBytes, plan.chunkBytes));
  plan.chunks = ch.chunks;
  planReduceLegs(n, phase, es, ch, plan);
  return plan;
}

std::vector<RingStep> ringOwnCopies(CollOp op, int n, std::size_t count, int root, std::size_t es) {
  std::vector<RingStep> copies;
  for (int r = 0; r < n; ++r) {
    if (op != CollOp::kAllGather && !(op == CollOp::kBroadcast && r == root)) continue;
    RingStep c = step(RingAction::kCopy, r, false);
    c.src = {RingBuffer::kSend, r, 0};
    c.dst = {RingBuffer::kRecv, r, op == CollOp::kAllGather ? r * count * es : 0};
    c.elements = count;
    copies.push_back(c);
  }
  return copies;
}

}  // namespace gpupeer
