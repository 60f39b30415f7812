// The version codes a snapshot records, as people write them.
#include "gpupeer/version_text.hpp"

#include <fmt/format.h>

namespace gpupeer {

std::string ncclVersionText(int code) {
  // nccl.h's NCCL_VERSION(X, Y, Z): X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z from 2.9.
  if (code < 10000) return fmt::format("{}.{}.{}", code / 1000, (code % 1000) / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 10000, (code / 100) % 100, code % 100);
}

std::string cudaVersionText(int code) { return fmt::format("{}.{}", code / 1000, (code % 1000) / 10); }

}  // namespace gpupeer
