// Which KB an installed gpupeer reads: the one installed beside it, never the source tree it was
// built from. A copy of the binary in a temporary prefix with a KB of one entry of its own must
// explain that entry's text and nothing the source tree's kb/ knows.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_support.hpp"

namespace gpupeer {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOwnEntry = R"({"id": "test/installed-kb-only", "regex": "okapi-ledger-failure-17"})";
constexpr const char* kOwnText = "'okapi-ledger-failure-17'";
// Explained by the source tree's kb/ (cuda/peer-access-unsupported-by-hardware).
constexpr const char* kSourceTreeText = "'CUDA error: peer access is not supported between these two devices'";

class InstalledKb : public ::testing::Test {
 protected:
  // Runs `binary args` with GPUPEER_KB_PATH unset, so that only the built-in KB is read.
  CliRun run(const std::string& binary, const std::string& args) {
    return runCli(scratch_, args, nullptr, "env -u GPUPEER_KB_PATH ", binary);
  }
  // <prefix>/bin/gpupeer, a copy of the binary under test.
  std::string installCopy(const std::string& prefix) {
    fs::create_directories(prefix + "/bin");
    fs::copy_file(GPUPEER_CLI_PATH, prefix + "/bin/gpupeer");
    return prefix + "/bin/gpupeer";
  }
  testing::TempDir scratch_;
};

TEST_F(InstalledKb, BinaryReadsTheKbInstalledBesideIt) {
  std::string prefix = scratch_.path() + "/prefix";
  std::string copy = installCopy(prefix);
  scratch_.write("prefix/share/gpupeer/kb/test/installed-kb-only.json", kOwnEntry);
  CliRun own = run(copy, std::string("explain ") + kOwnText);
  EXPECT_EQ(own.exitCode, 0) << own.out << own.err;
  EXPECT_NE(own.out.find("test/installed-kb-only"), std::string::npos) << own.out;
  CliRun source = run(copy, std::string("explain ") + kSourceTreeText);
  EXPECT_EQ(source.exitCode, 1) << "the source tree's kb/ was read:\n" << source.out;
  EXPECT_NE(source.out.find("(1 entry in the knowledge base)"), std::string::npos) << source.out;
}

TEST_F(InstalledKb, BuildTreeBinaryReadsTheSourceTree) {
  // The same two texts the other way round, so that the test above cannot pass by an explain
  // that matches nothing.
  CliRun source = run(GPUPEER_CLI_PATH, std::string("explain ") + kSourceTreeText);
  EXPECT_EQ(source.exitCode, 0) << source.out << source.err;
  EXPECT_NE(source.out.find("cuda/peer-access-unsupported-by-hardware"), std::string::npos) << source.out;
  EXPECT_EQ(run(GPUPEER_CLI_PATH, std::string("explain ") + kOwnText).exitCode, 1);
}

}  // namespace
}  // namespace gpupeer
