#pragma once
// Loading the snapshot fixtures of tests/data.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gpupeer/doctor.hpp"
#include "gpupeer/snapshot_json.hpp"

namespace gpupeer::testing {

/// The fixture `name` from tests/data; fails the test (and returns an empty snapshot) if it
/// does not load.
inline Snapshot loadFixture(const std::string& name) {
  Result<Snapshot> s = loadSnapshotFile(std::string(GPUPEER_TEST_DATA_DIR) + "/" + name);
  EXPECT_TRUE(s.isOk()) << s.status().toString();
  return s.isOk() ? s.value() : Snapshot{};
}

/// The rule names of a report's findings (a rule that fires twice appears twice).
inline std::multiset<std::string> rulesOf(const DoctorReport& r) {
  std::multiset<std::string> out;
  for (const Finding& f : r.findings) out.insert(f.rule);
  return out;
}

}  // namespace gpupeer::testing
