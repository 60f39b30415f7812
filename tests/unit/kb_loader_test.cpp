// Loading KB entries: both schemas, and every way a file can be wrong without stopping the rest.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "gpupeer/knowledge_base.hpp"
#include "kb_test_support.hpp"

namespace gpupeer {
namespace {

using testing::TempDir;

bool anyContains(const std::vector<std::string>& lines, const std::string& a, const std::string& b = "") {
  for (const std::string& l : lines)
    if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
  return false;
}

TEST(KbLoader, ReadsSeedSchema) {
  TempDir dir;
  testing::writeFixtureKb(dir);
  std::vector<std::string> warnings;
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({dir.path()}, &warnings);
  ASSERT_TRUE(kb.isOk()) << kb.status().toString();
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  ASSERT_EQ(kb.value().size(), 4u);

  const KbEntry* e = kb.value().find("cuda/peer-access-unsupported-by-hardware");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->regex, "peer access is not supported between these two devices");
  EXPECT_EQ(e->domain, "cuda");
  EXPECT_EQ(e->category, "runtime_error");
  EXPECT_EQ(e->errorCode, "cudaErrorPeerAccessUnsupported");
  EXPECT_NE(e->rootCause.find("peer-to-peer"), std::string::npos);
  ASSERT_EQ(e->deadEnds.size(), 2u);
  EXPECT_DOUBLE_EQ(e->deadEnds[0].failRate, 0.9);
  EXPECT_TRUE(e->deadEnds[0].action.empty());
  ASSERT_EQ(e->workarounds.size(), 2u);
  EXPECT_EQ(e->workarounds[1].how, "export NCCL_P2P_DISABLE=1");
  EXPECT_DOUBLE_EQ(e->confidence, 0.84);
  EXPECT_DOUBLE_EQ(e->fixSuccessRate, 0.7);
  EXPECT_EQ(e->officialDocUrl, "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__PEER.html");
  EXPECT_NE(e->sourceFile.find("peer-access-unsupported-by-hardware.json"), std::string::npos);
  EXPECT_FALSE(e->wrapper);

  const KbEntry* tf = kb.value().find("tensorflow/gpu-peer-access-error");
  ASSERT_NE(tf, nullptr);
  ASSERT_EQ(tf->confusedWith.size(), 1u);
  EXPECT_EQ(tf->confusedWith[0].id, "cuda/peer-access-unsupported-by-hardware");
  EXPECT_DOUBLE_EQ(tf->confusedWith[0].probability, 0.5);
  EXPECT_EQ(tf->confusedWith[0].condition, "same restriction");

  EXPECT_TRUE(kb.value().find("test/unhandled-cuda-error")->wrapper);
  EXPECT_EQ(kb.value().find("no/such-id"), nullptr);
}

TEST(KbLoader, ReadsCanonSchema) {
  std::vector<std::string> warnings;
  Result<KnowledgeBase> kb =
      KnowledgeBase::loadDirectories({std::string(GPUPEER_TEST_DATA_DIR) + "/kb_canon"}, &warnings);
  ASSERT_TRUE(kb.isOk()) << kb.status().toString();
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  ASSERT_EQ(kb.value().size(), 4u);

  const KbEntry* e = kb.value().find("cuda/multi-gpu-peer-access-error/cuda12-a100");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->signature, "RuntimeError: CUDA error: peer access is not supported between these two devices");
  EXPECT_EQ(e->regex,
            "(peer access.*not supported|cannot enable peer|P2P.*not.*support|cudaDeviceEnablePeerAccess.*error)");
  EXPECT_EQ(e->domain, "cuda");
  EXPECT_EQ(e->category, "runtime_error");
  EXPECT_EQ(e->rootCause.rfind("GPUs cannot directly access each other's memory.", 0), 0u);  // verdict.summary
  EXPECT_DOUBLE_EQ(e->fixSuccessRate, 0.65);
  EXPECT_DOUBLE_EQ(e->confidence, 0.8);
  EXPECT_EQ(e->officialDocUrl, "https://deadends.dev/cuda/multi-gpu-peer-access-error/cuda12-a100");
  ASSERT_EQ(e->deadEnds.size(), 2u);
  EXPECT_EQ(e->deadEnds[0].action, "Force enable peer access with environment variables");
  EXPECT_DOUBLE_EQ(e->deadEnds[0].failRate, 0.9);
  ASSERT_EQ(e->deadEnds[0].sources.size(), 1u);
  ASSERT_EQ(e->workarounds.size(), 3u);
  EXPECT_TRUE(e->workarounds[2].how.empty());  // this canon workaround has no "how"
  ASSERT_EQ(e->precededBy.size(), 1u);
  EXPECT_EQ(e->precededBy[0].id, "cuda/nccl-timeout-distributed/cuda12-a100");
  EXPECT_DOUBLE_EQ(e->precededBy[0].probability, 0.15);
  // The best workaround (88%) comes first, whatever its place in the file.
  EXPECT_EQ(firstWorkaround(*e), "nvidia-smi topo -m  # NV# = NVLink, PHB = no direct P2P");

  const KbEntry* sys = kb.value().find("cuda/nccl-unhandled-system-error/torch2.1-multi-gpu");
  ASSERT_NE(sys, nullptr);
  ASSERT_EQ(sys->confusedWith.size(), 1u);
  EXPECT_EQ(sys->confusedWith[0].id, "cuda/all-cuda-capable-devices-busy/cuda12-linux");
  EXPECT_NE(sys->confusedWith[0].condition.find("distributed_error"), std::string::npos);  // "distinction"
  EXPECT_NE(sys->workarounds[1].how.find("\nnvcc --version"), std::string::npos);          // multi-line how kept
}

TEST(KbLoader, ReadsBothSchemasTogether) {
  TempDir dir;
  testing::writeFixtureKb(dir);
  std::vector<std::string> warnings;
  Result<KnowledgeBase> kb =
      KnowledgeBase::loadDirectories({dir.path(), std::string(GPUPEER_TEST_DATA_DIR) + "/kb_canon"}, &warnings);
  ASSERT_TRUE(kb.isOk());
  EXPECT_EQ(kb.value().size(), 8u);
}

TEST(KbLoader, InvalidJsonIsReportedWithItsNameAndSkipped) {
  TempDir dir;
  testing::writeFixtureKb(dir);
  std::string bad = dir.write("cuda/broken-entry.json", "{\"id\": \"cuda/broken\", \"regex\": ");
  dir.write("cuda/not-an-entry.json", "[1, 2, 3]");
  dir.write("cuda/no-regex.json", R"({"id": "cuda/no-regex", "signature": "x"})");
  dir.write("cuda/wrong-type.json", R"({"id": "cuda/wrong-type", "regex": "x", "dead_ends": [{"fail_rate": "high"}]})");
  dir.write("notes.txt", "not json, not a .json file: ignored");
  dir.write("schema.json", R"({"type": "object"})");  // the schema is not an entry
  std::vector<std::string> warnings;
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({dir.path()}, &warnings);
  ASSERT_TRUE(kb.isOk()) << kb.status().toString();
  EXPECT_EQ(kb.value().size(), 4u);
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_TRUE(anyContains(warnings, bad, "not valid JSON")) << warnings[0];
  EXPECT_TRUE(anyContains(warnings, "not-an-entry.json", "not an object"));
  EXPECT_TRUE(anyContains(warnings, "no-regex.json", "regex: required field is missing"));
  EXPECT_TRUE(anyContains(warnings, "wrong-type.json", "dead_ends[0].fail_rate: expected a number"));
}

TEST(KbLoader, RegexRe2CannotCompileIsReportedAndSkipped) {
  TempDir dir;
  testing::writeFixtureKb(dir);
  dir.write("cuda/lookbehind.json", R"({"id": "cuda/lookbehind", "regex": "(?<=peer )access"})");
  dir.write("cuda/big-repeat.json", R"({"id": "cuda/big-repeat", "regex": "a{1001}"})");
  dir.write("cuda/backref.json", R"({"id": "cuda/backref", "regex": "(peer) \\1"})");
  dir.write("cuda/matches-everything.json", R"({"id": "cuda/matches-everything", "regex": "x*"})");
  std::vector<std::string> warnings;
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({dir.path()}, &warnings);
  ASSERT_TRUE(kb.isOk());
  EXPECT_EQ(kb.value().size(), 4u);
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_TRUE(anyContains(warnings, "lookbehind.json", "does not compile with RE2"));
  EXPECT_TRUE(anyContains(warnings, "big-repeat.json", "does not compile with RE2"));
  EXPECT_TRUE(anyContains(warnings, "backref.json", "does not compile with RE2"));
  EXPECT_TRUE(anyContains(warnings, "matches-everything.json", "matches an empty line"));
  EXPECT_EQ(kb.value().find("cuda/lookbehind"), nullptr);
}

TEST(KbLoader, DuplicateIdKeepsTheFirstAndNamesBothFiles) {
  TempDir a, b;
  testing::writeFixtureKb(a);
  std::string dup = b.write("again.json", testing::kSeedPeerUnsupported);
  std::vector<std::string> warnings;
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({a.path(), b.path()}, &warnings);
  ASSERT_TRUE(kb.isOk());
  EXPECT_EQ(kb.value().size(), 4u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(anyContains(warnings, dup, "duplicate id 'cuda/peer-access-unsupported-by-hardware'"));
  EXPECT_TRUE(anyContains(warnings, a.path()));
  EXPECT_NE(kb.value().find("cuda/peer-access-unsupported-by-hardware")->sourceFile.find(a.path()), std::string::npos);
}

TEST(KbLoader, MissingDirectoryIsAnErrorNamingIt) {
  TempDir dir;
  std::string missing = dir.path() + "/no-such-kb";
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({dir.path(), missing}, nullptr);
  ASSERT_FALSE(kb.isOk());
  EXPECT_EQ(kb.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(kb.status().message().find(missing), std::string::npos);
}

TEST(KbLoader, EmptyDirectoryGivesEmptyKb) {
  TempDir dir;
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({dir.path()}, nullptr);
  ASSERT_TRUE(kb.isOk());
  EXPECT_EQ(kb.value().size(), 0u);
}

TEST(KbLoader, DefaultDirectoriesEndWithKbPath) {
  const char* old = std::getenv("GPUPEER_KB_PATH");
  std::string saved = old ? old : "";
  setenv("GPUPEER_KB_PATH", "/first/kb::/second/kb", 1);
  std::vector<std::string> dirs = KnowledgeBase::defaultDirectories();
  if (old)
    setenv("GPUPEER_KB_PATH", saved.c_str(), 1);
  else
    unsetenv("GPUPEER_KB_PATH");
  ASSERT_GE(dirs.size(), 2u);
  EXPECT_EQ(dirs[dirs.size() - 2], "/first/kb");
  EXPECT_EQ(dirs.back(), "/second/kb");
  // In a build tree the built-in KB is the source tree's kb/.
  EXPECT_EQ(dirs.front(), GPUPEER_SOURCE_KB_DIR);
}

TEST(KbLoader, ParsesEntryFromJsonValue) {
  Result<KbEntry> e = kbEntryFromJson(nlohmann::json::parse(testing::kWrapperUnhandled), "mem");
  ASSERT_TRUE(e.isOk());
  EXPECT_TRUE(e.value().wrapper);
  EXPECT_EQ(e.value().sourceFile, "mem");
  EXPECT_EQ(firstWorkaround(e.value()), "");  // no workarounds
  EXPECT_FALSE(kbEntryFromJson(nlohmann::json::parse(R"({"id": 5, "regex": "x"})")).isOk());
  EXPECT_FALSE(kbEntryFromJson(nlohmann::json::parse(R"({"id": "", "regex": "x"})")).isOk());
}

TEST(KbLoader, WorkaroundsBySuccessAndFirstWorkaround) {
  Result<KbEntry> e = kbEntryFromJson(nlohmann::json::parse(testing::kSeedPeerUnsupported));
  ASSERT_TRUE(e.isOk());
  std::vector<const KbWorkaround*> sorted = workaroundsBySuccess(e.value());
  ASSERT_EQ(sorted.size(), 2u);
  EXPECT_DOUBLE_EQ(sorted[0]->successRate, 0.75);
  EXPECT_EQ(firstWorkaround(e.value()), "export NCCL_P2P_DISABLE=1");
}

TEST(KbLoader, AddRejectsDuplicatesAndBadRegex) {
  KnowledgeBase kb;
  KbEntry e;
  e.id = "x/one";
  e.regex = "one";
  EXPECT_TRUE(kb.add(e).isOk());
  EXPECT_FALSE(kb.add(e).isOk());
  e.id = "x/two";
  e.regex = "(unclosed";
  EXPECT_FALSE(kb.add(e).isOk());
  EXPECT_EQ(kb.size(), 1u);
}

TEST(KbLoader, BuiltinKnowledgeBaseIsLoadedOnce) {
  const KnowledgeBase& a = builtinKnowledgeBase();
  const KnowledgeBase& b = builtinKnowledgeBase();
  EXPECT_EQ(&a, &b);
}

}  // namespace
}  // namespace gpupeer
