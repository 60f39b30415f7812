// The gpupeer binary end to end on inputs that need no GPU: snapshots, bad input, exit codes.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "gpupeer/snapshot_json.hpp"

namespace gpupeer {
namespace {

const std::string kData = GPUPEER_TEST_DATA_DIR;

class Cli : public ::testing::Test {
 protected:
  CliRun run(const std::string& args, const std::string& env = "") { return runCli(scratch_, args, nullptr, env); }
  testing::TempDir scratch_;
};

TEST_F(Cli, TopoOfTheEightGpuFixturePrintsTheEightByEightMatrix) {
  CliRun r = run("topo --snapshot " + kData + "/snapshot_hgx_h100_8gpu.json");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("GPU7    NV18    NV18    NV18    NV18    NV18    NV18    NV18    X"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Legend:"), std::string::npos);
  EXPECT_NE(r.out.find("GPU7 -> GPU6  OK"), std::string::npos);
  CliRun json = run("topo --json --snapshot " + kData + "/snapshot_hgx_h100_8gpu.json");
  ASSERT_EQ(json.exitCode, 0);
  auto parsed = nlohmann::json::parse(json.out);
  EXPECT_EQ(parsed["pairs"].size(), 56u);
  EXPECT_EQ(parsed["matrix"][0][1], "NV18");
}

TEST_F(Cli, SnapshotFileRoundTripsThroughTheCli) {
  std::string out = scratch_.path() + "/copy.json";
  CliRun r = run("snapshot --snapshot " + kData + "/snapshot_mig_one_gpu.json -o " + out);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  Result<Snapshot> original = loadSnapshotFile(kData + "/snapshot_mig_one_gpu.json");
  Result<Snapshot> copy = loadSnapshotFile(out);
  ASSERT_TRUE(original.isOk() && copy.isOk());
  EXPECT_EQ(original.value(), copy.value());
}

TEST_F(Cli, SnapshotSummaryWritesVersionsAsPeopleDo) {
  CliRun r = run("snapshot --snapshot " + kData + "/snapshot_h200_2gpu_captured.json");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("CUDA driver 13.0, runtime 13.0; NVML 13.580.159.04; NCCL 2.28.3\n"), std::string::npos)
      << r.out;
}

TEST_F(Cli, HelpListsEveryExitCodeAndNoBuildPath) {
  CliRun top = run("--help");
  ASSERT_EQ(top.exitCode, 0) << top.err;
  for (const char* code : {"0 ok", "1 failed", "2 usage", "3 not applicable", "4 error", "5 doctor found warnings"})
    EXPECT_NE(top.out.find(code), std::string::npos) << code << " missing from:\n" << top.out;
  EXPECT_NE(top.out.find("SIGPIPE"), std::string::npos) << top.out;
  for (const char* sub : {"--help", "coll --help", "doctor --help", "explain --help"}) {
    CliRun r = run(sub);
    ASSERT_EQ(r.exitCode, 0) << sub << ": " << r.err;
    EXPECT_EQ(r.out.find(GPUPEER_CLI_PATH), std::string::npos) << sub << ":\n" << r.out;
    EXPECT_NE(r.out.find("Usage: gpupeer "), std::string::npos) << sub << ":\n" << r.out;
  }
}

TEST_F(Cli, BadSnapshotsNameTheProblem) {
  std::string truncated =
      scratch_.write("truncated.json", "{\"schema\": \"gpupeer.snapshot\", \"version\": 1, \"gpus\": [");
  CliRun r = run("topo --snapshot " + truncated);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("truncated.json:1:"), std::string::npos) << r.err;
  std::string newer = scratch_.write("newer.json", "{\"schema\": \"gpupeer.snapshot\", \"version\": 99}");
  r = run("doctor --snapshot " + newer);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("version 99 is not supported"), std::string::npos) << r.err;
  r = run("topo --snapshot " + scratch_.path() + "/missing.json");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("cannot open snapshot file"), std::string::npos) << r.err;
  // The user's input is at fault, not a line of gpupeer: no source location.
  EXPECT_EQ(r.err, "gpupeer: error: not-found: cannot open snapshot file '" + scratch_.path() +
                       "/missing.json': No such file or directory\n");
}

TEST_F(Cli, DoctorOfflineExitCodesFollowTheWorstFinding) {
  EXPECT_EQ(run("doctor --snapshot " + kData + "/snapshot_hgx_h100_8gpu.json").exitCode, 0);
  CliRun warn = run("doctor --snapshot " + kData + "/snapshot_consumer_2gpu_no_p2p.json");
  EXPECT_EQ(warn.exitCode, 5);
  EXPECT_NE(warn.out.find("explained by KB cuda/peer-access-unsupported-by-hardware"), std::string::npos);
  EXPECT_NE(warn.out.find("first thing to try:"), std::string::npos);
  EXPECT_NE(warn.out.find("Not run: P2P data check"), std::string::npos);
  CliRun json = run("doctor --json --snapshot " + kData + "/snapshot_degraded_nvlink_pcie.json");
  EXPECT_EQ(json.exitCode, 5);
  auto parsed = nlohmann::json::parse(json.out);
  EXPECT_EQ(parsed["worst"], "warning");
  EXPECT_EQ(parsed["findings"].size(), 5u);
}

TEST_F(Cli, HiddenGpusAreExplainedNotCrashedOn) {
  // CUDA_VISIBLE_DEVICES="" hides every GPU, on a GPU machine too, so this holds everywhere.
  for (const char* cmd : {"check", "check --ipc", "doctor", "topo", "bench -t ce_write", "coll all_reduce"}) {
    CliRun r = run(cmd, "CUDA_VISIBLE_DEVICES= ");
    EXPECT_EQ(r.exitCode, 3) << cmd << ": " << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("CUDA_VISIBLE_DEVICES"), std::string::npos) << cmd << ": " << r.out << r.err;
  }
}

// Each short option means one thing in every subcommand: -d devices, -o the output file, -f the
// sweep's size factor; --json a flag. With the GPUs hidden coll parses all of them, then says
// that no GPU is there (exit 3, not 2) and writes nothing.
TEST_F(Cli, CollTakesTheSameOptionsAsTheOtherCommands) {
  const std::string out = scratch_.path() + "/coll.json";
  CliRun r = run("coll all_reduce -b 8 -e 1K -f 4 -d 0 --datatype bfloat16 --op max --json --progress -o " + out,
                 "CUDA_VISIBLE_DEVICES= ");
  EXPECT_EQ(r.exitCode, 3) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::ifstream(out).good());
  for (const char* args :
       {"check -d 0", "bench -d 0,1 -t ce_write --progress", "bench --sweep -b 8 -e 1K -f 4 --pair 0,1 -t ce_write"}) {
    CliRun other = run(args, "CUDA_VISIBLE_DEVICES= ");
    EXPECT_EQ(other.exitCode, 3) << args << ": " << other.err;
  }
}

// Every subcommand's help ends with command lines to copy and the exit codes it can give.
TEST_F(Cli, EverySubcommandsHelpShowsExamplesAndExitCodes) {
  for (const std::string sub : {"doctor", "topo", "check", "bench", "coll", "explain", "snapshot", "report", "nccl"}) {
    CliRun r = run(sub + " --help");
    ASSERT_EQ(r.exitCode, 0) << sub << ": " << r.err;
    const std::size_t examples = r.out.find("Examples:\n  gpupeer " + sub);
    const std::size_t codes = r.out.find("Exit codes: 0 ");
    EXPECT_NE(examples, std::string::npos) << sub << ":\n" << r.out;
    EXPECT_NE(codes, std::string::npos) << sub << ":\n" << r.out;
    EXPECT_LT(examples, codes) << sub;
    EXPECT_NE(r.out.find("2 bad input", codes), std::string::npos) << sub << ":\n" << r.out;
  }
}

TEST_F(Cli, BadArgumentsAreUsageErrors) {
  EXPECT_EQ(run("bench -s 0").exitCode, 2);
  EXPECT_EQ(run("bench -s 12Q").exitCode, 2);
  EXPECT_EQ(run("bench --path fastest").exitCode, 2);
  EXPECT_EQ(run("bench --copies 0").exitCode, 2);
  EXPECT_EQ(run("check --size-mib 0").exitCode, 2);
  EXPECT_EQ(run("check --ipc -d one").exitCode, 2);
  CliRun unknown = run("coll all_sum");
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.err.find("unknown collective 'all_sum'"), std::string::npos) << unknown.err;
  CliRun avg = run("coll all_reduce --datatype int8 --op avg");
  EXPECT_EQ(avg.exitCode, 2);
  EXPECT_NE(avg.err.find("avg is not offered for int8"), std::string::npos) << avg.err;
  EXPECT_EQ(run("coll all_reduce --datatype float128").exitCode, 2);
  EXPECT_EQ(run("coll all_reduce -b 1K -e 12Q").exitCode, 2);
  EXPECT_EQ(run("coll all_reduce -n 0").exitCode, 2);
  EXPECT_EQ(run("coll all_reduce --baseline mpi").exitCode, 2);
  EXPECT_EQ(run("no-such-command").exitCode, 2);
  EXPECT_EQ(run("").exitCode, 2);
}

}  // namespace
}  // namespace gpupeer
