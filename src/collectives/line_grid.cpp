#include "collectives/line_grid.hpp"

#include <algorithm>

namespace gpupeer {

// Small blocks, and shares of whole warps: both measured faster (docs/collectives.md, tuned
// constants).
LineGrid lineGridFor(std::size_t lines, int linesPerBlock) {
  std::size_t perBlock = static_cast<std::size_t>(std::max(linesPerBlock, 0));
  if (perBlock == 0)
    for (perBlock = kFewestLineBlockLines;
         perBlock < kMaxLineBlockLines && (lines + perBlock - 1) / perBlock > kMaxLineBlocks;)
      perBlock *= 2;
  LineGrid grid;
  grid.blocks = static_cast<int>(std::clamp<std::size_t>((lines + perBlock - 1) / perBlock, 1, kMaxLineBlocks));
  grid.threads = static_cast<int>(std::clamp<std::size_t>(lineShare(lines, grid.blocks), 32, kMaxLineBlockLines));
  return grid;
}

}  // namespace gpupeer
