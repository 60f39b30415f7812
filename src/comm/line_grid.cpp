#include "comm/line_grid.hpp"

#include <algorithm>

namespace gpupeer {

// Small blocks: on 2x H200 in graphs (medians of six windows), all-reduces of 8 KiB took 3.33 us
// by this rule against 3.60 in blocks of 512 lines, 16 KiB 3.46 against 3.81, and 256 KiB 4.77
// (256 blocks of 128) against 5.16 (64 of 512); from 512 KiB the shapes measured the same. At
// 1 MiB, 256 blocks of 512 lines took 9.33 us against 9.78 in 264 blocks whose shares were not
// whole warps (176d235:bench/results/2026-11-22-h200x2-s8, runs 3 and 1).
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
