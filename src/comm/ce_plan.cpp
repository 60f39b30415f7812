#include "comm/ce_plan.hpp"

#include <algorithm>

#include "comm/signal_numbers.hpp"

namespace gpupeer {

CePlan planCeChunks(std::size_t count, std::size_t elementSize, std::size_t slotBytes, int parts, bool shrinkTail) {
  constexpr std::size_t kMinChunkBytes = 1u << 20;
  const std::size_t es = std::max<std::size_t>(elementSize, 1), bytes = count * es;
  if (parts <= 0) parts = bytes >= (64u << 20) ? 8 : 4;
  std::size_t chunkBytes = std::max<std::size_t>((bytes / parts + 255) / 256 * 256, kMinChunkBytes);
  chunkBytes = std::max<std::size_t>(std::min(chunkBytes, slotBytes / 4), slotBytes / kMaxCePositions);
  CePlan plan;
  plan.chunkElements = std::max<std::size_t>(chunkBytes / es, 1);
  plan.positions = static_cast<int>(std::max<std::size_t>(slotBytes / (plan.chunkElements * es), 1));
  // Tail pieces keep 256-byte boundaries where the element size allows.
  const std::size_t grain = std::max<std::size_t>(256 / es, 1),
                    minPiece = std::max<std::size_t>(kMinChunkBytes / es, 1);
  auto add = [&](std::size_t first, std::size_t len) {
    const int j = static_cast<int>(plan.chunks.size());
    plan.chunks.push_back({first, len, j % plan.positions});
  };
  std::size_t first = 0;
  while (first < count) {
    const std::size_t len = std::min(plan.chunkElements, count - first);
    const bool last = first + len == count;
    if (!last || !shrinkTail) {
      add(first, len);
      first += len;
      continue;
    }
    // The last chunk in halves: each piece half of what is left, until what is left is small.
    std::size_t left = len;
    while (left >= 2 * minPiece) {
      const std::size_t half = (left / 2 + grain - 1) / grain * grain;
      add(first, half);
      first += half;
      left -= half;
    }
    add(first, left);
    first += left;
  }
  return plan;
}

}  // namespace gpupeer
