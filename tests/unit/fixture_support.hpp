#pragma once
// Loading the snapshot fixtures of tests/data.

#include <gtest/gtest.h>

#include <string>

#include "gpupeer/snapshot_json.hpp"

namespace gpupeer::testing {

/// The fixture `name` from tests/data; fails the test (and returns an empty snapshot) if it
/// does not load.
inline Snapshot loadFixture(const std::string& name) {
  Result<Snapshot> s = loadSnapshotFile(std::string(GPUPEER_TEST_DATA_DIR) + "/" + name);
  EXPECT_TRUE(s.isOk()) << s.status().toString();
  return s.isOk() ? s.value() : Snapshot{};
}

}  // namespace gpupeer::testing
