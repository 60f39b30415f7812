#pragma once
// The kernels' limits that the host plans and the tuning variables check against
// (collectives/one_shot_kernels.cuh launches the kernels): plain constants, no CUDA header.

#include <cstddef>

namespace gpupeer {

/// The most blocks of a one-shot kernel's grid.
inline constexpr int kMaxOneShotBlocks = 512;

/// The most steps a block of the chain kernel may take (its flags count them within an
/// operation's range).
inline constexpr std::size_t kMaxChainSteps = 4000;

}  // namespace gpupeer
