#pragma once
/// \file known.hpp
/// A fact about the machine that may not have been readable. An unknown value keeps the
/// reason ("NVML not loaded: libnvidia-ml.so.1: cannot open shared object file"), so the
/// report can say why instead of guessing. A value type: one thread at a time per object.

#include <optional>
#include <string>
#include <utility>

namespace gpupeer {

/// A T that is either known or unknown with the reason.
template <class T>
class Known {
 public:
  Known() : reason_("not probed") {}  ///< unknown: "not probed"
  /// Known. Implicit, so a known fact is assigned like its value.
  Known(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)

  /// Unknown, because of `reason`.
  static Known unknown(std::string reason) {
    Known k;
    k.reason_ = std::move(reason);
    return k;
  }

  bool known() const { return value_.has_value(); }  ///< has a value?
  const T& value() const { return *value_; }         ///< the value; only when known()
  /// The value, or `fallback` when unknown.
  T valueOr(T fallback) const { return value_ ? *value_ : std::move(fallback); }
  /// Why the value is unknown; empty when known.
  const std::string& reason() const { return value_ ? kEmpty : reason_; }

  /// Equal values, or both unknown for the same reason.
  bool operator==(const Known& other) const { return value_ == other.value_ && reason() == other.reason(); }

 private:
  static inline const std::string kEmpty;
  std::optional<T> value_;
  std::string reason_;
};

}  // namespace gpupeer
