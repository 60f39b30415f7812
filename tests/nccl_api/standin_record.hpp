#pragma once
// What the stand-in NCCL records of each call, shared by the stand-in and the tests.

#include <nccl.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

struct StandinCall {
  std::string name;
  std::vector<std::uint64_t> arguments;  ///< each argument's bits (argumentBits)
};

/// Pointers by address, numbers and enums by value, a unique id by its first 8 bytes.
template <typename T>
std::uint64_t argumentBits(const T& value) {
  if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<std::uintptr_t>(value);
  } else if constexpr (std::is_same_v<T, ncclUniqueId>) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, value.internal, sizeof bits);
    return bits;
  } else {
    return static_cast<std::uint64_t>(value);
  }
}

/// The stand-in's record (exported by it as standinCalls).
using StandinCallsFn = const std::vector<StandinCall>* (*)();
