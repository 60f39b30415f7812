#include "comm/line_grid.hpp"

#include <algorithm>

namespace gpupeer {

// Small blocks: on 2x H200 in graphs, all-reduces of 4-16 KiB took 3.30-3.42 us in blocks of 64
// lines against 3.45-3.81 in blocks of 512, and 256 KiB 4.84 us in 256 blocks of 128 lines
// against 5.17 in 64 of 512; from 512 KiB the shapes measured the same, and at 1 MiB 256 blocks
// of 512 lines took 9.33 us against 9.78 in 264 blocks whose shares were not whole warps
// (bench/results/2026-11-22-h200x2-s8).
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
