#pragma once
// GPU tests skip, with the reason, where fewer GPUs are visible than they need.

#include <gtest/gtest.h>

#include "gpupeer/probe.hpp"

namespace gpupeer::testing {

/// The probed machine, once per test binary.
inline const Snapshot& machine() {
  static const Snapshot s = probeMachine();
  return s;
}

}  // namespace gpupeer::testing

#define GPUPEER_REQUIRE_GPUS(n)                                                                                    \
  do {                                                                                                             \
    const auto& s_ = ::gpupeer::testing::machine();                                                                \
    if (static_cast<int>(s_.gpus.size()) < (n))                                                                    \
      GTEST_SKIP() << "needs " << (n) << " GPU(s); " << s_.gpus.size() << " visible: " << ::gpupeer::whyNoGpu(s_); \
  } while (0)
