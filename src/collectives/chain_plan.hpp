#pragma once
// The chain kernel's shape, pure (one_shot_path.cpp launches it; tests/unit/chain_plan_test.cpp
// checks it): the grid, the step each block passes on at a time, the scratch positions a
// reduce cycles through, and each rank's neighbours along the chain.

#include <array>
#include <cstddef>

#include "gpupeer/collective_types.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

struct ChainPlan {
  int blocks = 1;
  std::size_t stepBytes = 0;
  std::size_t positions = 0;  ///< steps of scratch per block where steps pass through scratch
  /// Rank r's predecessor and successor along the chain; -1 at its ends. Broadcast: root,
  /// root + 1, ..., root - 1. Reduce: root + 1, ..., root (the root adds last).
  std::array<int, kMaxCommRanks> prev{}, next{};
};

/// The chain for `op` (broadcast or reduce) of `bytes` on `ranks` ranks: steps of `stepBytes`
/// (a multiple of 16), at most `mostBlocks` blocks (one per step below that). A reduce's
/// partials, and with `staged` a broadcast's steps (ranks in other processes: no rank can
/// reach the next one's output), pass through `scratchBytes` of each rank's scratch (two steps
/// per block at least, the step shrinking to fit). No block takes more than the kernel's 4000
/// steps: the step grows where the message needs it. kInvalidArgument where the scratch cannot
/// hold one step per block.
Result<ChainPlan> planChain(CollOp op, int ranks, int root, std::size_t bytes, std::size_t stepBytes, int mostBlocks,
                            std::size_t scratchBytes, bool staged = false);

}  // namespace gpupeer
