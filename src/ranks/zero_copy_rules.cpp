#include "ranks/zero_copy_rules.hpp"

namespace gpupeer {

std::optional<ZeroCopySizes> zeroCopySizesFor(CollOp op, int ranks) {
  constexpr std::size_t kMiB = 1u << 20;
  if (ranks == 2) return op == CollOp::kAllGather ? std::optional{ZeroCopySizes{32 * kMiB}} : std::nullopt;
  if (op == CollOp::kAllGather) return ZeroCopySizes{4 * kMiB};
  if (op == CollOp::kBroadcast) return ZeroCopySizes{32 * kMiB, 128 * kMiB};
  return std::nullopt;
}

}  // namespace gpupeer
