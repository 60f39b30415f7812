#pragma once
// The grid of the one-shot kernel's low-latency variant (one_shot_lines.cu), pure so that
// tests/unit/line_grid_test.cpp can check it. One 16-byte line carries 8 bytes of data; each
// thread takes one line while the grid allows, and each block a whole number of warps' lines.

#include <cstddef>

namespace gpupeer {

/// Lines per block: the launch's fewest and most, and the most blocks (two per SM of a 132-SM
/// GPU: every block waits for its peers' same block, so the grid must be resident at once).
inline constexpr int kFewestLineBlockLines = 64;
inline constexpr int kMaxLineBlockLines = 512;
inline constexpr int kMaxLineBlocks = 264;

struct LineGrid {
  int blocks = 1;
  int threads = 32;
};

/// The grid for `lines` lines: blocks of `linesPerBlock` (0: the fewest lines per block, from
/// 64 and doubling up to 512, that needs no more than kMaxLineBlocks blocks), and threads for
/// the kernel's share per block (lineShare), at most 512.
LineGrid lineGridFor(std::size_t lines, int linesPerBlock);

/// Each block's share of `lines` over `blocks`: a whole number of warps' lines (32 lines,
/// 512 bytes of a block's stores), so no warp's stores straddle two blocks' shares. The
/// kernel computes the same.
constexpr std::size_t lineShare(std::size_t lines, std::size_t blocks) {
  return ((lines + blocks - 1) / blocks + 31) / 32 * 32;
}

}  // namespace gpupeer
