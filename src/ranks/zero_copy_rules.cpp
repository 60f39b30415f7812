#include "ranks/zero_copy_rules.hpp"

namespace gpupeer {

std::optional<std::size_t> zeroCopyFromBytesFor(CollOp op, int ranks) {
  constexpr std::size_t kMiB = 1u << 20;
  if (ranks == 2) {
    if (op == CollOp::kAllReduce || op == CollOp::kReduceScatter) return 64 * kMiB;
    if (op == CollOp::kAllGather) return 32 * kMiB;
    return std::nullopt;
  }
  if (op == CollOp::kAllGather) return 4 * kMiB;
  return std::nullopt;
}

}  // namespace gpupeer
