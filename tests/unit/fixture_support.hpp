#pragma once
// Loading the snapshot fixtures of tests/data.

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "gpupeer/snapshot_json.hpp"

namespace gpupeer::testing {

/// The fixture `name` from tests/data. When it does not load, the test fails with the reason
/// and stops there (GoogleTest reports the exception), so no later line uses an empty snapshot.
inline Snapshot loadFixture(const std::string& name) {
  Result<Snapshot> s = loadSnapshotFile(std::string(GPUPEER_TEST_DATA_DIR) + "/" + name);
  if (!s.isOk()) throw std::runtime_error("test fixture " + name + " did not load: " + s.status().toString());
  return s.value();
}

}  // namespace gpupeer::testing
