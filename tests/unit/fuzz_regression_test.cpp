// Inputs the fuzz targets (tests/fuzz) once crashed on, kept under tests/data/fuzz/<target>/
// after the fix: each must now go through its target's body without breaking an invariant.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "../fuzz/fuzz_bodies.hpp"

namespace gpupeer {
namespace {

namespace fs = std::filesystem;

const std::map<std::string, std::function<void(std::string_view)>>& bodies() {
  static const std::map<std::string, std::function<void(std::string_view)>> kBodies = {
      {"snapshot", fuzz::snapshotBody}, {"kb_entry", fuzz::kbEntryBody}, {"log_lines", fuzz::logLinesBody},
      {"matcher", fuzz::matcherBody},   {"cpulist", fuzz::cpuListBody},  {"results", fuzz::resultsBody}};
  return kBodies;
}

TEST(FuzzRegression, EveryKeptInputPasses) {
  const fs::path root = fs::path(GPUPEER_TEST_DATA_DIR) / "fuzz";
  ASSERT_TRUE(fs::is_directory(root)) << "fixture folder " << root << " is missing";
  int replayed = 0;
  for (const fs::directory_entry& target : fs::directory_iterator(root)) {
    if (!target.is_directory()) continue;
    auto body = bodies().find(target.path().filename().string());
    ASSERT_NE(body, bodies().end()) << "no fuzz target named " << target.path().filename();
    for (const fs::directory_entry& input : fs::directory_iterator(target.path())) {
      std::ifstream in(input.path(), std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      SCOPED_TRACE(input.path().string());
      body->second(text.str());  // aborts, naming the invariant, where one breaks
      ++replayed;
    }
  }
  EXPECT_GT(replayed, 0) << "no kept input under " << root;
}

}  // namespace
}  // namespace gpupeer
