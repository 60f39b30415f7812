#pragma once
// Where each step of the chain kernel lies in the message, on host (comm/chain_plan.cpp,
// tests/unit/chain_plan_test.cpp) and device (chain_kernels.cu) alike.
//
// A rank forwards a step only after it has arrived whole, so the chain's far end starts
// (ranks - 1) first steps of the whole grid after the first rank: with 264 blocks of 64 KiB,
// ~16 MiB per hop. Steps may therefore start small and double up to their full size; all
// blocks' step s together cover one window of the message, and block b the b-th piece of it.

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define GPUPEER_HOST_DEVICE __host__ __device__
#else
#define GPUPEER_HOST_DEVICE
#endif

namespace gpupeer {

struct ChainStepRange {
  std::size_t begin = 0;  ///< byte offset in the message
  std::size_t size = 0;   ///< bytes (the message may end inside the step)
};

/// Step s of block `block` in a grid of `grid` blocks: steps of first, 2 first, 4 first, ...
/// while below `step`, then `step` each (first == 0 or first >= step: `step` from the start).
GPUPEER_HOST_DEVICE inline ChainStepRange chainStepRange(std::uint32_t s, int block, int grid, std::size_t first,
                                                         std::size_t step) {
  std::size_t before = 0;  // bytes of one block's steps before s
  std::size_t size = first == 0 || first > step ? step : first;
  std::uint32_t i = 0;
  for (; i < s && size < step; ++i) {
    before += size;
    size *= 2;
  }
  if (size >= step) {
    size = step;
    before += static_cast<std::size_t>(s - i) * step;
  }
  return {before * static_cast<std::size_t>(grid) + static_cast<std::size_t>(block) * size, size};
}

/// The steps a block takes to cover `bytes` with that grid (its last one may be partly past
/// the message).
GPUPEER_HOST_DEVICE inline std::size_t chainStepCount(std::size_t bytes, int grid, std::size_t first,
                                                      std::size_t step) {
  std::size_t steps = 0;
  for (std::size_t size = first == 0 || first > step ? step : first, window = 0; window < bytes; ++steps) {
    if (size >= step) return steps + (bytes - window + step * grid - 1) / (step * grid);
    window += size * grid;
    size *= 2;
  }
  return steps;
}

}  // namespace gpupeer
