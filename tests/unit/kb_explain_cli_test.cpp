// `gpupeer explain` end to end: the real binary, its exit codes, stdin, files and --json.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_support.hpp"
#include "kb_test_support.hpp"

namespace gpupeer {
namespace {

using testing::TempDir;

class ExplainCli : public ::testing::Test {
 protected:
  void SetUp() override { testing::writeFixtureKb(kb_); }
  std::string kbArg() const { return "--kb " + quote(kb_.path()); }
  TempDir kb_;
  TempDir scratch_;
};

TEST_F(ExplainCli, MatchedTextExitsZero) {
  CliRun r =
      runCli(scratch_, "explain " + kbArg() +
                           " 'RuntimeError: CUDA error: peer access is not supported between these two devices'");
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("cuda/peer-access-unsupported-by-hardware"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Try:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NCCL_P2P_DISABLE=1"), std::string::npos) << r.out;
}

TEST_F(ExplainCli, SeveralWordsAreJoined) {
  CliRun r = runCli(scratch_, "explain " + kbArg() + " ncclUnhandledCudaError: Call to CUDA function failed");
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("test/unhandled-cuda-error"), std::string::npos) << r.out;
}

TEST_F(ExplainCli, NothingMatchedExitsOne) {
  CliRun r = runCli(scratch_, "explain " + kbArg() + " 'Test passed'");
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("No known failure matched the 1 line read"), std::string::npos) << r.out;
}

TEST_F(ExplainCli, MissingFileExitsTwoNamingIt) {
  std::string missing = scratch_.path() + "/no-such.log";
  CliRun r = runCli(scratch_, "explain " + kbArg() + " --file " + quote(missing));
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
}

TEST_F(ExplainCli, NoInputIsAUsageError) {
  CliRun r = runCli(scratch_, "explain " + kbArg());
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("gpupeer explain:"), std::string::npos) << r.err;
}

TEST_F(ExplainCli, MissingKbDirectoryExitsTwoNamingIt) {
  std::string missing = scratch_.path() + "/no-kb";
  CliRun r = runCli(scratch_, "explain --kb " + quote(missing) + " 'Test passed'");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
}

TEST_F(ExplainCli, DashReadsStdin) {
  std::string log =
      "step 1 loss 0.5\n"
      "\x1b[31mhost:1:2 [0] transport/p2p.cc:273 NCCL WARN failed to open CUDA IPC handle : 217 peer access is "
      "not supported between these two devices\x1b[0m\r\n"
      "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled cuda error, NCCL version 2.14.3\n";
  CliRun r = runCli(scratch_, "explain " + kbArg() + " -", &log);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  // kb/ is loaded too and may hold its own entry for this line: look for the fixture's id.
  EXPECT_NE(r.out.find(". test/nccl-ipc-217"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("line 2: host:1:2 [0]"), std::string::npos) << r.out;

  r = runCli(scratch_, "explain " + kbArg() + " --file -", &log);
  EXPECT_EQ(r.exitCode, 0) << r.err;
}

TEST_F(ExplainCli, FileAndJsonAndTop) {
  std::string log = scratch_.write(
      "train.log",
      "ok\nInternalError: Peer access from GPU:0 to GPU:1 is not supported by the current CUDA driver or device "
      "topology\nunhandled cuda error\n");
  CliRun r = runCli(scratch_, "explain " + kbArg() + " --json --top 1 --file " + quote(log));
  EXPECT_EQ(r.exitCode, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["linesRead"], 3);
  ASSERT_EQ(j["matches"].size(), 1u);
  EXPECT_EQ(j["matches"][0]["id"], "tensorflow/gpu-peer-access-error");
  EXPECT_EQ(j["matches"][0]["line"], 2);
  EXPECT_GE(j["totalMatches"].get<int>(), 2);

  r = runCli(scratch_, "explain " + kbArg() + " --json 'Test passed'");
  EXPECT_EQ(r.exitCode, 1);
  j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["matches"].size(), 0u);
}

TEST_F(ExplainCli, KbWarningsGoToStderrWithPrefix) {
  TempDir bad;
  std::string file = bad.write("broken.json", "{ not json");
  CliRun r = runCli(scratch_, "explain " + kbArg() + " --kb " + quote(bad.path()) + " 'Test passed'");
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("gpupeer explain: warning: " + file), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("warning"), std::string::npos);
}

TEST_F(ExplainCli, KbPathEnvironmentIsLoaded) {
  TempDir extra;
  extra.write("x/only-in-env.json", R"({"id": "x/only-in-env", "regex": "zebra-crossing-failure-42"})");
  std::string text = " 'zebra-crossing-failure-42'";
  CliRun r = runCli(scratch_, "explain" + text, nullptr, "GPUPEER_KB_PATH=" + quote(extra.path()) + " ");
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("x/only-in-env"), std::string::npos) << r.out;
  r = runCli(scratch_, "explain" + text);
  EXPECT_EQ(r.exitCode, 1) << r.out;
}

}  // namespace
}  // namespace gpupeer
