#include "collectives/pull_plan.hpp"

#include <algorithm>

namespace gpupeer {
namespace {

void addSource(PullPart& p, int rank, std::size_t offset) { p.sources[p.sourceCount++] = {rank, offset}; }
void addTarget(PullPart& p, int rank, std::size_t offset) { p.targets[p.targetCount++] = {rank, offset}; }

// Every rank's input at `offset`, in rank order (the reduction's order on every GPU).
void everySource(PullPart& p, int n, std::size_t offset) {
  for (int r = 0; r < n; ++r) addSource(p, r, offset);
}

// Targets starting with the rank after `owner`'s own: owners that all began with rank 0 would
// crowd one GPU's port at once.
template <class Wanted>
void targetsFrom(PullPart& p, int n, int owner, std::size_t offset, Wanted wanted) {
  for (int k = 0; k < n; ++k) {
    const int r = (owner + k) % n;
    if (wanted(r)) addTarget(p, r, offset);
  }
}

// Owner i of `owners` gets elements [begin, end) of `count`, cut at multiples of `grain`.
struct Span {
  std::size_t begin, end;
};
Span share(std::size_t count, std::size_t grain, int owners, int i) {
  const std::size_t grains = (count + grain - 1) / grain;
  const std::size_t b = std::min(count, grains * i / owners * grain);
  const std::size_t e = std::min(count, grains * (i + 1) / owners * grain);
  return {b, e};
}

std::vector<PullPart> planOnePull(CollOp op, int n, int root, std::size_t count) {
  std::vector<PullPart> parts(n);
  for (int r = 0; r < n; ++r) {
    PullPart& p = parts[r];
    if (op == CollOp::kReduce && r != root) continue;
    p.len = count;
    everySource(p, n, op == CollOp::kReduceScatter ? r * count : 0);
    addTarget(p, r, 0);
  }
  return parts;
}

}  // namespace

std::vector<PullPart> planPull(CollOp op, int n, int root, std::size_t count, std::size_t elementBytes, bool split) {
  if (!split) return planOnePull(op, n, root, count);
  std::vector<PullPart> parts(n);
  const std::size_t grain = std::max<std::size_t>(1, 16 / std::max<std::size_t>(1, elementBytes));
  auto all = [](int) { return true; };
  for (int r = 0; r < n; ++r) {
    PullPart& p = parts[r];
    switch (op) {
      case CollOp::kAllReduce: {
        const Span s = share(count, grain, n, r);
        p.len = s.end - s.begin;
        everySource(p, n, s.begin);
        targetsFrom(p, n, r, s.begin, all);
        break;
      }
      case CollOp::kReduceScatter:
        p.len = count;
        everySource(p, n, r * count);
        addTarget(p, r, 0);
        break;
      case CollOp::kAllGather:
        p.len = count;
        addSource(p, r, 0);
        targetsFrom(p, n, r, r * count, all);
        break;
      case CollOp::kBroadcast:
      case CollOp::kReduce: {
        if (r == root) {
          // Out of place the root copies its own input locally: as a target of every owner it
          // took the message in over its port once more (broadcast of 512 MiB on 4x H200:
          // 1801 us against 1610 in place).
          if (op == CollOp::kBroadcast) {
            p.len = count;
            addSource(p, root, 0);
            addTarget(p, root, 0);
          }
          break;
        }
        // Owners root+1, root+2, ...: owner index (r - root - 1) mod n.
        const Span s = share(count, grain, n - 1, (r - root - 1 + n) % n);
        p.len = s.end - s.begin;
        if (op == CollOp::kReduce) {
          everySource(p, n, s.begin);
          addTarget(p, root, s.begin);
        } else {
          addSource(p, root, s.begin);
          targetsFrom(p, n, r, s.begin, [root](int t) { return t != root; });
        }
        break;
      }
      case CollOp::kAllToAll:
      case CollOp::kSendRecv: break;
    }
    if (p.len == 0) p = PullPart{};
  }
  return parts;
}

std::size_t longestPart(const std::vector<PullPart>& parts) {
  std::size_t longest = 0;
  for (const PullPart& p : parts) longest = std::max(longest, p.len);
  return longest;
}

int pullBlocksFor(std::size_t partBytes, int mostBlocks, std::size_t bytesPerBlock) {
  const std::size_t most = static_cast<std::size_t>(std::max(mostBlocks, 1));
  return static_cast<int>(std::clamp<std::size_t>(partBytes / std::max<std::size_t>(bytesPerBlock, 1), 1, most));
}

std::size_t pullBlockBytesFor(CollOp op, int ranks, std::size_t partBytes) {
  constexpr std::size_t kMiB = 1u << 20;
  if (op == CollOp::kAllReduce) return ranks == 2 && partBytes >= 2 * kMiB ? 32u << 10 : 16u << 10;
  if (ranks > 2 && op == CollOp::kReduce)
    return partBytes < kMiB ? 16u << 10 : partBytes < 2 * kMiB ? 128u << 10 : 256u << 10;
  if (ranks > 2 && op == CollOp::kBroadcast)
    return partBytes < kMiB        ? 16u << 10
           : partBytes < 2 * kMiB  ? 128u << 10
           : partBytes < 8 * kMiB  ? 256u << 10
           : partBytes < 32 * kMiB ? partBytes / 16
                                   : 2 * kMiB;
  return 64u << 10;
}

std::size_t pullTileBytesFor(std::size_t partBytes, int blocks) {
  constexpr std::size_t kTileBytes = 64u << 10, kLargeShare = 512u << 10;
  return blocks > 0 && partBytes / static_cast<std::size_t>(blocks) >= kLargeShare ? kTileBytes : 0;
}

}  // namespace gpupeer
