// The gpupeer tool of the build without CUDA (tests/host_only builds it): the subcommands that
// work from files give what the build with CUDA gives on every snapshot fixture, and each
// subcommand that needs the machine's GPUs says that this build cannot, with exit 3.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "../unit/cli_support.hpp"

namespace gpupeer {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> snapshotFixtures() {
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(GPUPEER_TEST_DATA_DIR)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("snapshot_") && name.ends_with(".json")) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// doctor's text ends its "What was checked" line with the seconds it took, which differ between
// runs and builds (this one sanitized): set aside.
std::string withoutSeconds(const std::string& text) {
  static const std::regex kSeconds(R"( \(\d+\.\d s\)\n)");
  return std::regex_replace(text, kSeconds, " (time)\n");
}

class WithoutCuda : public ::testing::Test {
 protected:
  CliRun run(const std::string& args, const std::string& binary = GPUPEER_CLI_PATH) {
    return runCli(scratch_, args, nullptr, "env -u GPUPEER_KB_PATH ", binary);
  }
  // Output and exit code of both builds' tools for `args`; the build with CUDA's where given.
  void expectSameAsCudaBuild(const std::string& args) {
    CliRun own = run(args);
    EXPECT_TRUE(own.exitCode >= 0 && own.exitCode <= 5) << args << ": " << own.exitCode << " " << own.err;
    if (std::string(GPUPEER_CUDA_CLI_PATH).empty()) return;
    CliRun cuda = run(args, GPUPEER_CUDA_CLI_PATH);
    EXPECT_EQ(own.exitCode, cuda.exitCode) << args;
    EXPECT_EQ(withoutSeconds(own.out), withoutSeconds(cuda.out)) << args;
    EXPECT_EQ(own.err, cuda.err) << args;
  }
  testing::TempDir scratch_;
};

TEST_F(WithoutCuda, DoctorAndTopoOnEverySnapshotMatchTheCudaBuild) {
  std::vector<std::string> fixtures = snapshotFixtures();
  ASSERT_GE(fixtures.size(), 10u);
  for (const std::string& f : fixtures) {
    expectSameAsCudaBuild("doctor --snapshot " + quote(f));
    expectSameAsCudaBuild("doctor --json --snapshot " + quote(f));
    expectSameAsCudaBuild("topo --snapshot " + quote(f));
  }
}

TEST_F(WithoutCuda, DoctorOnASnapshotGivesTheVerdictAndExitCode) {
  CliRun r =
      run("doctor --snapshot " + quote(std::string(GPUPEER_TEST_DATA_DIR) + "/snapshot_pcie_4gpu_two_switches.json"));
  EXPECT_EQ(r.exitCode, 5) << r.out << r.err;
  EXPECT_NE(r.out.find("gpupeer doctor: P2P works with 1 warning(s); P2P on 4 of 12 pairs"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(p2p-unsupported)"), std::string::npos) << r.out;
}

TEST_F(WithoutCuda, ExplainReadsTheKbAndErrorCodes) {
  CliRun r = run("explain 'CUDA error: peer access is not supported between these two devices'");
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("cuda/peer-access-unsupported-by-hardware"), std::string::npos) << r.out;
  // Error codes come from the written-out table, not the CUDA runtime.
  expectSameAsCudaBuild("explain cudaErrorPeerAccessUnsupported");
  expectSameAsCudaBuild("explain --json 'CUDA error 217'");
}

TEST_F(WithoutCuda, ReportOnASnapshotIsWritten) {
  std::string html = scratch_.path() + "/report.html";
  CliRun r = run("report -o " + quote(html) + " --snapshot " +
                 quote(std::string(GPUPEER_TEST_DATA_DIR) + "/snapshot_h200_4gpu_captured.json"));
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_GT(fs::file_size(html), 5000u);
}

TEST_F(WithoutCuda, GpuSubcommandsSayTheyNeedAGpuBuild) {
  const std::string offline = "; offline: doctor --snapshot, topo --snapshot, explain, report --snapshot\n";
  const std::pair<std::string, std::string> cases[] = {
      {"check", "check"},
      {"check --devices 0,1 --json", "check"},
      {"bench -t ce_bw", "bench"},
      {"coll -b 8 -e 1M", "coll"},
      {"nccl --env", "nccl"},
      {"doctor", "doctor without --snapshot"},
      {"doctor --no-gpu-actions", "doctor without --snapshot"},
      {"topo --json", "topo without --snapshot"},
      {"snapshot -o x.json", "snapshot without --snapshot"},
      {"report", "report without --snapshot"},
  };
  for (const auto& [args, what] : cases) {
    CliRun r = run(args);
    EXPECT_EQ(r.exitCode, 3) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(r.err, "gpupeer: error: unsupported: this gpupeer was built without CUDA: " + what +
                         " needs a GPU build" + offline)
        << args;
  }
  EXPECT_FALSE(fs::exists(scratch_.path() + "/x.json"));
}

}  // namespace
}  // namespace gpupeer
