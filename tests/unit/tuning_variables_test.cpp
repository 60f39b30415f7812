// The registry of tuning variables: each text the environment may hold sets its option field or
// is refused naming the variable, options out of range are refused naming the field, and every
// GPUPEER_ variable the code names is either registered or a documented non-tuning variable.
#include "collectives/tuning_variables.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

namespace gpupeer {
namespace {

namespace fs = std::filesystem;

const TuningVariable& variable(const std::string& name) {
  for (const TuningVariable& v : tuningVariables())
    if (name == v.name) return v;
  throw std::runtime_error(name + " is not registered");
}

Status apply(const std::string& name, const std::string& text, CommunicatorOptions& o) {
  return applyTuningText(variable(name), text, o);
}

TEST(TuningVariables, TextsInRangeSetTheirField) {
  CommunicatorOptions o;
  ASSERT_TRUE(apply("GPUPEER_PULL_TILE", "4K", o).isOk());
  EXPECT_EQ(o.pullTileBytes, 4096u);
  ASSERT_TRUE(apply("GPUPEER_PULL_TILE", "0", o).isOk());  // one range per block
  EXPECT_EQ(o.pullTileBytes, 0u);
  ASSERT_TRUE(apply("GPUPEER_ONESHOT_BLOCKS", "64", o).isOk());
  EXPECT_EQ(o.oneShotBlocks, 64);
  ASSERT_TRUE(apply("GPUPEER_LL_BLOCK_LINES", "96", o).isOk());
  EXPECT_EQ(o.lineBlockLines, 96);
  ASSERT_TRUE(apply("GPUPEER_LL128_SLOT", "0", o).isOk());  // no 128-byte lines
  EXPECT_EQ(o.line128SlotBytes, 0u);
  ASSERT_TRUE(apply("GPUPEER_CE_SLOT", "8M", o).isOk());
  EXPECT_EQ(o.ceSlotBytes, 8u << 20);
  ASSERT_TRUE(apply("GPUPEER_CE_ISSUE", "receiver", o).isOk());
  EXPECT_EQ(o.ceIssue, CommunicatorOptions::CeIssue::kReceiver);
  ASSERT_TRUE(apply("GPUPEER_STAGING", "cuda", o).isOk());
  EXPECT_FALSE(o.stagedPipeline);
  ASSERT_TRUE(apply("GPUPEER_LAUNCH_THREADS", "0", o).isOk());
  EXPECT_FALSE(o.launchThreads);
  ASSERT_TRUE(apply("GPUPEER_ALGO", "split", o).isOk());
  EXPECT_EQ(o.algorithm, "split");
  ASSERT_TRUE(apply("GPUPEER_P2P_DISABLE", "0", o).isOk());
  EXPECT_FALSE(o.disableP2p);
  ASSERT_TRUE(apply("GPUPEER_P2P_DISABLE", "yes", o).isOk());  // anything but 0, as NCCL's
  EXPECT_TRUE(o.disableP2p);
  EXPECT_TRUE(checkTuningRanges(o).isOk()) << checkTuningRanges(o).toString();
}

TEST(TuningVariables, HostileTextsAreRefusedByName) {
  const std::pair<const char*, const char*> texts[] = {
      {"GPUPEER_CE_SLOT", "lots"},          {"GPUPEER_CE_SLOT", "99999999999999999999"},
      {"GPUPEER_ONESHOT_SLOT", "12"},       {"GPUPEER_ONESHOT_BLOCKS", "0"},
      {"GPUPEER_ONESHOT_BLOCKS", "100000"}, {"GPUPEER_CE_ISSUE", "both"},
      {"GPUPEER_LL_BLOCK_LINES", "33"},     {"GPUPEER_LL_SLOT", "1"},
      {"GPUPEER_RING_CHUNK", "1"},          {"GPUPEER_CHAIN_STEP", "15"},
      {"GPUPEER_PULL_TILE", "17"},          {"GPUPEER_PULL_BLOCK", "1"},
      {"GPUPEER_PULL_BLOCK", "0"},          {"GPUPEER_STAGING", "host"},
      {"GPUPEER_LAUNCH_THREADS", "2"},      {"GPUPEER_LL128_SLOT", "100"},
  };
  for (const auto& [name, text] : texts) {
    CommunicatorOptions o;
    Status st = apply(name, text, o);
    ASSERT_FALSE(st.isOk()) << name << "=" << text << " was accepted";
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << st.toString();
    EXPECT_NE(st.message().find(name), std::string::npos) << st.toString();
  }
}

TEST(TuningVariables, OptionsOutOfRangeAreRefusedNamingFieldAndVariable) {
  EXPECT_TRUE(checkTuningRanges(CommunicatorOptions{}).isOk()) << checkTuningRanges(CommunicatorOptions{}).toString();
  CommunicatorOptions o;
  o.pullBlockBytes = 0;  // the rule, though the environment cannot ask for it
  o.oneShotBlocks = 0;
  EXPECT_TRUE(checkTuningRanges(o).isOk());
  o.lineBlockLines = 33;
  Status st = checkTuningRanges(o);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("lineBlockLines"), std::string::npos) << st.toString();
  EXPECT_NE(st.message().find("GPUPEER_LL_BLOCK_LINES"), std::string::npos) << st.toString();
  o = {};
  o.oneShotBlocks = -3;
  EXPECT_EQ(checkTuningRanges(o).code(), ErrorCode::kInvalidArgument);
}

TEST(TuningVariables, TheEnvironmentFillsTheDefaults) {
  // Each test runs in a process of its own (gtest_discover_tests), so the variables set here
  // reach no other test.
  ASSERT_EQ(setenv("GPUPEER_PULL_BLOCK", "16K", 1), 0);
  ASSERT_EQ(setenv("NCCL_P2P_DISABLE", "1", 1), 0);
  ASSERT_EQ(setenv("GPUPEER_CE_ISSUE", "", 1), 0);  // empty: not set
  Result<CommunicatorOptions> o = CommunicatorOptions::fromEnvironment();
  ASSERT_TRUE(o.isOk()) << o.status().toString();
  EXPECT_EQ(o.value().pullBlockBytes, 16u << 10);
  EXPECT_TRUE(o.value().disableP2p);
  EXPECT_EQ(o.value().ceIssue, CommunicatorOptions::CeIssue::kByRule);
  EXPECT_EQ(o.value().oneShotSlotBytes, CommunicatorOptions{}.oneShotSlotBytes);
  ASSERT_EQ(setenv("GPUPEER_ONESHOT_BLOCKS", "0", 1), 0);
  Result<CommunicatorOptions> refused = CommunicatorOptions::fromEnvironment();
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.status().message().find("GPUPEER_ONESHOT_BLOCKS=0"), std::string::npos)
      << refused.status().toString();
  for (const char* name : {"GPUPEER_PULL_BLOCK", "NCCL_P2P_DISABLE", "GPUPEER_CE_ISSUE", "GPUPEER_ONESHOT_BLOCKS"})
    unsetenv(name);
}

TEST(TuningVariables, TheDocsTableHasARowPerVariable) {
  const std::string table = tuningVariablesMarkdown();
  for (const TuningVariable& v : tuningVariables()) {
    EXPECT_NE(table.find(std::string("| `") + v.name + "`"), std::string::npos) << v.name;
    EXPECT_NE(table.find(std::string("| `") + v.option + "` |"), std::string::npos) << v.option;
  }
}

// One process per GPU: each rank reads the kernels' grids and steps and the algorithm, not the
// memory sizes, and ranks that were given different values are told which variable differs.
TEST(TuningVariables, RanksTakeTheKernelsGeometryAndMustAgreeOnIt) {
  CommunicatorOptions environment;
  ASSERT_TRUE(apply("GPUPEER_CHAIN_STEP", "64K", environment).isOk());
  ASSERT_TRUE(apply("GPUPEER_ONESHOT_BLOCKS", "32", environment).isOk());
  ASSERT_TRUE(apply("GPUPEER_ONESHOT_SLOT", "4M", environment).isOk());
  ASSERT_TRUE(apply("GPUPEER_ALGO", "chain", environment).isOk());
  CommunicatorOptions rank;
  applyRankTuning(environment, rank);
  EXPECT_EQ(rank.chainStepBytes, 64u << 10);
  EXPECT_EQ(rank.oneShotBlocks, 32);
  EXPECT_EQ(rank.oneShotSlotBytes, CommunicatorOptions{}.oneShotSlotBytes) << "slots size memory: RankCommOptions";

  const RankTuning mine = rankTuningOf(environment);
  EXPECT_EQ(mine.at("GPUPEER_CHAIN_STEP"), "65536");
  EXPECT_EQ(mine.at("GPUPEER_ALGO"), "chain");
  EXPECT_EQ(mine.count("GPUPEER_ONESHOT_SLOT"), 0u);
  EXPECT_EQ(mine.at("GPUPEER_PULL_TILE"), "not set") << "a field at its rule";
  EXPECT_EQ(rankTuningOf(CommunicatorOptions{}).at("GPUPEER_ONESHOT_BLOCKS"), "not set");
  EXPECT_TRUE(sameRankTuning(mine, 0, rankTuningOf(environment), 1).isOk());

  CommunicatorOptions other = environment;
  ASSERT_TRUE(apply("GPUPEER_CHAIN_STEP", "32K", other).isOk());
  Status differs = sameRankTuning(mine, 0, rankTuningOf(other), 3);
  ASSERT_FALSE(differs.isOk());
  EXPECT_EQ(differs.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(differs.message().find("GPUPEER_CHAIN_STEP is 32768 on rank 3 and 65536 on rank 0"), std::string::npos)
      << differs.message();
  // A rank that sent no values (an older build) differs from any.
  EXPECT_FALSE(sameRankTuning(mine, 0, RankTuning{}, 1).isOk());
  for (const TuningVariable& v : tuningVariables()) {
    if (std::string(v.name).find("SLOT") != std::string::npos) {
      EXPECT_FALSE(v.perRankToo) << v.name;
    }
  }
}

// GPUPEER_ variables that are not tuning knobs of the collectives, with the file that documents
// each.
const std::map<std::string, std::string> kOtherVariables = {
    {"GPUPEER_DEBUG", "README.md"},                          // log level
    {"GPUPEER_KB_PATH", "README.md"},                        // more knowledge-base folders
    {"GPUPEER_NCCL_ROUTE", "docs/nccl-api.md"},              // libgpupeer_nccl.so's routing
    {"GPUPEER_NCCL_DEBUG", "docs/nccl-api.md"},              // its log level
    {"GPUPEER_NCCL_TIMEOUT_MS", "docs/nccl-api.md"},         // its RankCommOptions::timeoutMs
    {"GPUPEER_NCCL_REAL_LIBRARY", "docs/nccl-api.md"},       // the NCCL it forwards to
    {"GPUPEER_HOST_ID", "docs/multi-process.md"},            // which host a rank counts as on
    {"GPUPEER_IPC_CHECK_CHILD", "src/check/ipc_check.cpp"},  // set by check --ipc for its child
};

TEST(TuningVariables, EveryVariableTheCodeNamesIsRegisteredOrDocumentedElsewhere) {
  const fs::path root = fs::path(GPUPEER_TEST_DATA_DIR).parent_path().parent_path();
  std::set<std::string> registered;
  for (const TuningVariable& v : tuningVariables()) registered.insert(v.name);
  auto nameChar = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; };
  int files = 0;
  for (const char* folder : {"src", "tools"})
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(root / folder)) {
      const std::string ext = e.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".cuh" && ext != ".h") continue;
      ++files;
      std::ifstream in(e.path());
      std::stringstream text;
      text << in.rdbuf();
      const std::string s = text.str();
      // Every string literal that is a whole variable name: "GPUPEER_..." up to its closing quote.
      for (std::size_t at = s.find("\"GPUPEER_"); at != std::string::npos; at = s.find("\"GPUPEER_", at + 1)) {
        std::size_t end = at + 1;
        while (end < s.size() && nameChar(s[end])) ++end;
        if (end == s.size() || s[end] != '"') continue;
        const std::string name = s.substr(at + 1, end - at - 1);
        EXPECT_TRUE(registered.count(name) || kOtherVariables.count(name))
            << name << " (" << e.path().string() << ") is neither in src/collectives/tuning_variables.cpp nor in this "
            << "test's list of other variables";
      }
    }
  EXPECT_GT(files, 100);
  for (const auto& [name, doc] : kOtherVariables) {
    std::ifstream in(root / doc);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find(name), std::string::npos) << doc << " does not mention " << name;
  }
}

}  // namespace
}  // namespace gpupeer
