#pragma once
// Loading the snapshot fixtures of tests/data.

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "gpupeer/doctor.hpp"
#include "gpupeer/snapshot_json.hpp"

namespace gpupeer::testing {

/// The fixture `name` from tests/data. When it does not load, the test fails with the reason
/// and stops there (GoogleTest reports the exception), so no later line uses an empty snapshot.
inline Snapshot loadFixture(const std::string& name) {
  Result<Snapshot> s = loadSnapshotFile(std::string(GPUPEER_TEST_DATA_DIR) + "/" + name);
  if (!s.isOk()) throw std::runtime_error("test fixture " + name + " did not load: " + s.status().toString());
  return s.value();
}

/// The rule names of a report's findings (a rule that fires twice appears twice).
inline std::multiset<std::string> rulesOf(const DoctorReport& r) {
  std::multiset<std::string> out;
  for (const Finding& f : r.findings) out.insert(f.rule);
  return out;
}

}  // namespace gpupeer::testing
