#pragma once
// The seeded pattern (gpupeer/pattern.hpp) written and checked on the device itself, so
// checking gigabytes costs GPU microseconds instead of a copy to the host.

#include <cstddef>
#include <cstdint>

#include "gpupeer/status.hpp"

namespace gpupeer {

/// Writes bytes [0, bytes) of the pattern for `seed` at `p` on `device` and waits for it.
Status fillPatternOnDevice(int device, void* p, std::size_t bytes, std::uint64_t seed);

struct PatternMismatches {
  unsigned long long count = 0;  ///< bytes that differ from the pattern
  unsigned long long first = 0;  ///< lowest differing offset, when count > 0
};

/// Compares [p, p + bytes) on `device` with the pattern for `seed`.
Result<PatternMismatches> countPatternMismatches(int device, const void* p, std::size_t bytes, std::uint64_t seed);

}  // namespace gpupeer
