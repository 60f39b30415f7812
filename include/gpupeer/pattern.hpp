#pragma once
/// \file pattern.hpp
/// Known-answer data for every transfer gpupeer verifies: a seeded, never-zero byte stream,
/// so an unwritten (zero-filled) byte, a stale byte from another test or a shifted copy all
/// show up as mismatches. Computable on host and device alike. Pure; any thread.

#include <cstddef>
#include <cstdint>
#include <optional>

#if defined(__CUDACC__)
#define GPUPEER_HOST_DEVICE __host__ __device__
#else
#define GPUPEER_HOST_DEVICE
#endif

namespace gpupeer {

/// SplitMix64's output function: a well-mixed 64-bit value for each input.
GPUPEER_HOST_DEVICE inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Byte `offset` of the stream for `seed`. Never 0.
GPUPEER_HOST_DEVICE inline std::uint8_t patternByte(std::uint64_t seed, std::uint64_t offset) {
  std::uint64_t word = splitmix64(seed ^ (offset >> 3) * 0x2545f4914f6cdd1dULL);
  auto b = static_cast<std::uint8_t>(word >> (8 * (offset & 7)));
  return b ? b : 0x5a;
}

/// Seed for a transfer between two devices, distinct per pair and per `salt` (method, case).
inline std::uint64_t transferSeed(int src, int dst, std::uint64_t salt) {
  return splitmix64((static_cast<std::uint64_t>(src) << 48) ^ (static_cast<std::uint64_t>(dst) << 32) ^ salt);
}

/// Fills `out` with bytes [start, start + n) of the stream.
void fillPattern(std::uint8_t* out, std::size_t n, std::uint64_t seed, std::uint64_t start = 0);

/// Where a checked range first differs from what it should hold.
struct Mismatch {
  std::size_t offset;     ///< from the start of the checked range
  std::uint8_t expected;  ///< the byte that should be there
  std::uint8_t actual;    ///< the byte found
  std::size_t count;      ///< mismatching bytes in the range
};

/// The first byte of `data` that differs from the stream (bytes [start, start + n)), with the
/// number of differing bytes; nullopt when every byte matches.
std::optional<Mismatch> findMismatch(const std::uint8_t* data, std::size_t n, std::uint64_t seed,
                                     std::uint64_t start = 0);

/// The first byte of `data` that is not `value` (for guard regions that must stay untouched).
std::optional<Mismatch> findNotEqual(const std::uint8_t* data, std::size_t n, std::uint8_t value);

}  // namespace gpupeer
