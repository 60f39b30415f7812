#pragma once
// Typed fields read out of JSON that gpupeer did not write (snapshots, `report --results`
// files), each named by its path ("gpus[1].pcie.maxWidth", "cells[3].median") when it is of the
// wrong type or makes no sense, so that the user learns which field to fix. Internal.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

namespace gpupeer {

/// A field of the wrong type or out of range. Thrown inside a reader only, and turned into a
/// kParse Status ("source: field 'path': message") where the reader is called.
struct JsonFieldError {
  std::string path;
  std::string message;
};

/// `path` and `key` joined as a field path: ("gpus[1]", "pcie") -> "gpus[1].pcie".
inline std::string jsonFieldPath(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

/// `v` as T, else throws JsonFieldError naming `path`: bool (true or false), an integral type
/// that holds the value (no silent truncation), double (any JSON number; JSON has no infinity),
/// std::string.
template <class T, class Json>
T jsonAs(const Json& v, const std::string& path) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) throw JsonFieldError{path, "expected true or false"};
  } else if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer()) throw JsonFieldError{path, "expected an integer"};
    bool fits = v.is_number_unsigned()
                    ? v.template get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<T>::max())
                    : (v.template get<std::int64_t>() >= std::int64_t(std::numeric_limits<T>::min()) &&
                       v.template get<std::int64_t>() <= std::int64_t(std::numeric_limits<T>::max()));
    if (!fits) throw JsonFieldError{path, "integer out of range"};
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) throw JsonFieldError{path, "expected a number"};
  } else {
    if (!v.is_string()) throw JsonFieldError{path, "expected a string"};
  }
  return v.template get<T>();
}

/// `value` when from `lo` to `hi`, else throws "V makes no sense here (expected lo to hi)".
template <class T>
T jsonInRange(T value, const std::string& path, T lo, T hi) {
  if (!(value >= lo && value <= hi))
    throw JsonFieldError{path, fmt::format("{} makes no sense here (expected {} to {})", value, lo, hi)};
  return value;
}

}  // namespace gpupeer
