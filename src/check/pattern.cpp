#include "gpupeer/pattern.hpp"

namespace gpupeer {

void fillPattern(std::uint8_t* out, std::size_t n, std::uint64_t seed, std::uint64_t start) {
  // One hash per 8 bytes (the same bytes patternByte gives), so 32 MiB takes milliseconds.
  std::size_t i = 0;
  for (; i < n && ((start + i) & 7) != 0; ++i) out[i] = patternByte(seed, start + i);
  for (; i + 8 <= n; i += 8) {
    std::uint64_t word = splitmix64(seed ^ ((start + i) >> 3) * 0x2545f4914f6cdd1dULL);
    for (int b = 0; b < 8; ++b) {
      auto v = static_cast<std::uint8_t>(word >> (8 * b));
      out[i + b] = v ? v : 0x5a;
    }
  }
  for (; i < n; ++i) out[i] = patternByte(seed, start + i);
}

std::optional<Mismatch> findMismatch(const std::uint8_t* data, std::size_t n, std::uint64_t seed, std::uint64_t start) {
  std::optional<Mismatch> first;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint8_t want = patternByte(seed, start + i);
    if (data[i] == want) continue;
    if (!first) first = Mismatch{i, want, data[i], 0};
    ++first->count;
  }
  return first;
}

std::optional<Mismatch> findNotEqual(const std::uint8_t* data, std::size_t n, std::uint8_t value) {
  std::optional<Mismatch> first;
  for (std::size_t i = 0; i < n; ++i) {
    if (data[i] == value) continue;
    if (!first) first = Mismatch{i, value, data[i], 0};
    ++first->count;
  }
  return first;
}

}  // namespace gpupeer
