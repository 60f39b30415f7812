#include "collectives/chain_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "collectives/kernel_limits.hpp"

namespace gpupeer {

Result<ChainPlan> planChain(CollOp op, int n, int root, std::size_t bytes, std::size_t step, int mostBlocks,
                            std::size_t scratch, bool staged) {
  if ((op != CollOp::kBroadcast && op != CollOp::kReduce) || n < 2 || n > kMaxCommRanks || root < 0 || root >= n ||
      step == 0 || step % 16 || mostBlocks < 1)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("chain plan: {} on {} ranks from root {}, steps of {} bytes, {} blocks",
                                     collOpName(op), n, root, step, mostBlocks));
  const bool reduce = op == CollOp::kReduce, throughScratch = reduce || staged;
  ChainPlan p;
  p.blocks = static_cast<int>(std::clamp<std::size_t>((bytes + step - 1) / step, 1, mostBlocks));
  // Steps through the next rank's scratch: room for two steps per block at least, so that a
  // block fills one while the next rank reads the other.
  if (throughScratch) step = std::max<std::size_t>(16, std::min(step, scratch / (2 * p.blocks) / 16 * 16));
  const std::size_t perStep = static_cast<std::size_t>(p.blocks) * kMaxChainSteps;
  if (bytes > step * perStep) step = ((bytes + perStep - 1) / perStep + 15) / 16 * 16;
  p.stepBytes = step;
  p.positions = scratch / (static_cast<std::size_t>(p.blocks) * step);
  if (throughScratch && p.positions < 1)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("{} of {} bytes by the chain: {} bytes of one-shot scratch per rank hold no "
                                     "step of {} bytes per block; raise the one-shot slots",
                                     collOpName(op), bytes, scratch, step));
  for (int r = 0; r < n; ++r) {
    const int position = (r - root - (reduce ? 1 : 0) + 2 * n) % n;
    p.prev[r] = position == 0 ? -1 : (r - 1 + n) % n;
    p.next[r] = position == n - 1 ? -1 : (r + 1) % n;
  }
  return p;
}

}  // namespace gpupeer
