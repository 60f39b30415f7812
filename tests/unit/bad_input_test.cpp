// The catalogue of bad input (docs/bad-inputs.md), library side: each snapshot, KB entry and
// log case is refused with a kParse/kInvalidArgument Status that names the problem, or read
// with bounded memory, and never crashes. The command-line cases are in bad_input_cli_test.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpupeer/kb_matcher.hpp"
#include "gpupeer/kb_render.hpp"
#include "gpupeer/knowledge_base.hpp"
#include "gpupeer/snapshot_json.hpp"
#include "kb_test_support.hpp"

namespace gpupeer {
namespace {

using Json = nlohmann::ordered_json;

std::string fixtureText(const std::string& name) {
  std::ifstream in(std::string(GPUPEER_TEST_DATA_DIR) + "/" + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A valid two-GPU snapshot as JSON, to be damaged one field at a time.
Json twoGpuSnapshot() {
  std::string text = fixtureText("snapshot_h200_2gpu_captured.json");
  if (text.empty()) throw std::runtime_error("fixture snapshot_h200_2gpu_captured.json is missing");
  return Json::parse(text);
}

// ---- snapshots ---------------------------------------------------------------------------

struct SnapshotCase {
  const char* name;
  std::string text;         // the whole file
  const char* messagePart;  // what the error must say
  ErrorCode code = ErrorCode::kParse;
};
// Test names say which case; GoogleTest prints the case by its name, not as bytes.
void PrintTo(const SnapshotCase& c, std::ostream* os) { *os << c.name; }

std::string damaged(const char* pointer, const Json& value) {
  Json j = twoGpuSnapshot();
  j[Json::json_pointer(pointer)] = value;
  return j.dump();
}

std::string withText(const std::string& marker, const std::string& replacement) {
  std::string text = twoGpuSnapshot().dump();
  std::size_t at = text.find(marker);
  if (at == std::string::npos) throw std::runtime_error("marker not in the fixture: " + marker);
  return text.replace(at, marker.size(), replacement);
}

// {"k0":0,"k1":1,...}: an object of `count` distinct keys.
std::string manyKeys(int count) {
  std::string text = "{";
  for (int i = 0; i < count; ++i) text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  return text + "}";
}

std::vector<SnapshotCase> snapshotCases() {
  Json dupGpu = twoGpuSnapshot();
  dupGpu["gpus"][1]["index"] = 0;
  Json dupPair = twoGpuSnapshot();
  dupPair["pairs"].push_back(dupPair["pairs"][0]);
  return {
      {"Empty", "", "not valid JSON"},
      {"Binary",
       std::string("\x7f"
                   "ELF\x02\x01\x01\0\0\0",
                   10),
       "not valid JSON"},
      {"Truncated", twoGpuSnapshot().dump().substr(0, 300), "not valid JSON"},
      {"InvalidUtf8", withText("\"hostname\":\"", "\"hostname\":\"\xff\xfe"), "invalid"},
      {"NumberOutOfRange", withText("\"version\":1", "\"version\":1e99999"), "not valid JSON"},
      {"IntegerTooLarge", damaged("/gpus/0/smCount", 1e30), "expected an integer"},
      {"DeepNesting", std::string(200000, '[') + std::string(200000, ']'), "nested more than 64 levels"},
      {"DeepNestingInAField", damaged("/description", Json::parse(std::string(100, '[') + std::string(100, ']'))),
       "nested more than 64 levels"},
      // 150,000 keys in a field nobody reads: refused by count, before the JSON library's
      // ordered object would search its keys on every insert (minutes).
      {"ManyKeysInAnUnreadField", withText("\"description\":", "\"description\":" + manyKeys(150000) + ",\"x\":"),
       "a JSON object with more than 10000 keys; refused"},
      {"TopLevelArray", "[1, 2, 3]", "expected an object"},
      {"NotASnapshot", R"({"schema": "something.else"})", "not a gpupeer snapshot"},
      {"SchemaVersionZero", damaged("/version", 0), "version 0 is not supported"},
      {"SchemaVersionFuture", damaged("/version", 99), "version 99 is not supported"},
      {"NegativeGpuIndex", damaged("/gpus/0/index", -1), "gpus[0].index"},
      {"NegativeSmCount", damaged("/gpus/0/smCount", -5), "gpus[0].smCount"},
      {"AbsurdPcieGeneration", damaged("/gpus/0/pcie/currentGen", 99), "gpus[0].pcie.currentGen"},
      {"NegativePcieWidth", damaged("/gpus/1/pcie/maxWidth", -16), "gpus[1].pcie.maxWidth"},
      {"ZeroNvLinkVersion", damaged("/gpus/0/nvlinks/0/version", 0), "gpus[0].nvlinks[0].version"},
      {"NegativeLinkNumber", damaged("/gpus/0/nvlinks/0/link", -3), "gpus[0].nvlinks[0].link"},
      {"NegativeDeviceCount", damaged("/deviceCount", -2), "deviceCount"},
      {"NegativeMemory", damaged("/gpus/0/memoryBytes", -1), "gpus[0].memoryBytes"},
      {"NegativeComputeCapability", damaged("/gpus/0/computeCapability", "-1.5"), "gpus[0].computeCapability"},
      {"DuplicateGpuIndex", dupGpu.dump(), "duplicate GPU index 0"},
      {"PairOfUnknownGpu", damaged("/pairs/0/dst", 7), "pairs[0]"},
      {"DuplicatePair", dupPair.dump(), "listed twice"},
      {"StringForInteger", damaged("/gpus/0/smCount", "132"), "gpus[0].smCount"},
      {"UnknownWithoutReason", damaged("/gpus/0/numaNode", Json{{"unknown", 5}}), "gpus[0].numaNode.unknown"},
      {"EnvironmentValueNotAString", damaged("/environment/NCCL_DEBUG", 1), "environment.NCCL_DEBUG"},
      {"RemoteTypeUnknownWord", damaged("/gpus/0/nvlinks/0/remoteType", "toaster"), "remoteType"},
  };
}

class BadSnapshot : public ::testing::TestWithParam<SnapshotCase> {};

TEST_P(BadSnapshot, IsRefusedWithItsReason) {
  const SnapshotCase& c = GetParam();
  Result<Snapshot> s = snapshotFromJson(c.text, "bad.json");
  ASSERT_FALSE(s.isOk()) << c.name << " was accepted";
  EXPECT_EQ(s.status().code(), c.code) << s.status().toString();
  EXPECT_NE(s.status().message().find(c.messagePart), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("bad.json"), std::string::npos) << "names the file: " << s.status().message();
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadSnapshot, ::testing::ValuesIn(snapshotCases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(BadSnapshotFile, ThatNeverEndsIsRefusedAtTheSizeLimit) {
  Result<Snapshot> s = loadSnapshotFile("/dev/zero");
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("larger than 64 MiB"), std::string::npos) << s.status().message();
}

TEST(BadSnapshotFile, FifoIsRefusedWithoutWaitingForAWriter) {
  testing::TempDir dir;
  std::string fifo = dir.path() + "/snapshot.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Result<Snapshot> s = loadSnapshotFile(fifo);  // nobody writes it: a blocking open never returns
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("'" + fifo + "' is a FIFO"), std::string::npos) << s.status().message();
}

TEST(BadSnapshotFile, ThatIsADirectoryCannotBeRead) {
  Result<Snapshot> s = loadSnapshotFile(GPUPEER_TEST_DATA_DIR);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.status().message().find(GPUPEER_TEST_DATA_DIR), std::string::npos) << s.status().message();
}

TEST(BadSnapshotFile, WithAnEmptyNameIsAnError) {
  Result<Snapshot> s = loadSnapshotFile("");
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.status().code(), ErrorCode::kInvalidArgument);
}

TEST(BadSnapshotStrings, InvalidUtf8FromTheMachineIsWrittenAsValidJson) {
  // The probe copies environment variables and host names as they are; they need not be UTF-8.
  Result<Snapshot> s = snapshotFromJson(twoGpuSnapshot().dump(), "fixture");
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  Snapshot machine = s.value();
  machine.environment["CUDA_VISIBLE_DEVICES"] = "0,\xff\xfe,1";
  machine.hostname = "node\xc3";
  std::string text = snapshotToJson(machine);
  Result<Snapshot> back = snapshotFromJson(text, "written");
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back.value().environment.at("CUDA_VISIBLE_DEVICES"), "0,\xef\xbf\xbd\xef\xbf\xbd,1");  // U+FFFD each
}

// ---- KB entries ----------------------------------------------------------------------------

struct KbCase {
  const char* name;
  std::string text;
  const char* messagePart;
};
// Test names say which case; GoogleTest prints the case by its name, not as bytes.
void PrintTo(const KbCase& c, std::ostream* os) { *os << c.name; }

const char* kGoodSeed = R"({"id": "cuda/x", "regex": "peer access is not supported", "signature": "s"})";

std::vector<KbCase> kbCases() {
  return {
      {"Empty", "", "not valid JSON"},
      {"Binary", std::string("\0\x01\x02\xff", 4), "not valid JSON"},
      {"Truncated", std::string(kGoodSeed).substr(0, 20), "not valid JSON"},
      {"InvalidUtf8",
       R"({"id": "cuda/x", "regex": "a)"
       "\xc3\x28"
       R"("})",
       "invalid"},
      {"NumberOutOfRange", R"({"id": "cuda/x", "regex": "abc", "confidence": 1e400})", "not valid JSON"},
      {"RateAboveOne", R"({"id": "cuda/x", "regex": "abc", "confidence": 7})", "confidence: 7 is not a rate"},
      {"NegativeRate", R"({"id": "cuda/x", "regex": "abc", "dead_ends": [{"fail_rate": -0.5}]})",
       "dead_ends[0].fail_rate"},
      {"DeepNesting",
       R"({"id": "cuda/x", "regex": "abc", "tags": )" + std::string(5000, '[') + std::string(5000, ']') + "}",
       "nested more than 64 levels"},
      {"TopLevelArray", "[]", "not an object"},
      {"MissingRegex", R"({"id": "cuda/x"})", "regex: required field is missing"},
      {"EmptyId", R"({"id": "", "regex": "abc"})", "id: is empty"},
      {"RegexNotAString", R"({"id": "cuda/x", "regex": ["abc"]})", "regex: expected a string"},
      {"CanonRegexWrongType", R"({"id": "cuda/x", "error": {"regex": 5}})", "error.regex: expected a string"},
      {"CanonVerdictNotAnObject", R"({"id": "cuda/x", "error": {"regex": "abc"}, "verdict": 3})",
       "verdict: expected an object"},
      {"TransitionNotAnId", R"({"id": "cuda/x", "regex": "abc", "transition_graph": {"leads_to": [3]}})",
       "leads_to[0]: expected an id or an object"},
  };
}

class BadKbEntry : public ::testing::TestWithParam<KbCase> {};

TEST_P(BadKbEntry, IsRefusedWithItsReason) {
  const KbCase& c = GetParam();
  Result<KbEntry> e = kbEntryFromText(c.text, "entry.json");
  ASSERT_FALSE(e.isOk()) << c.name << " was accepted";
  EXPECT_EQ(e.status().code(), ErrorCode::kParse);
  EXPECT_NE(e.status().message().find(c.messagePart), std::string::npos) << e.status().message();
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadKbEntry, ::testing::ValuesIn(kbCases()),
                         [](const auto& info) { return std::string(info.param.name); });

struct RegexCase {
  const char* name;
  std::string regex;
  const char* messagePart;  // nullptr: accepted
};

// "e0|e1|...": `count` alternatives.
std::string alternatives(int count) {
  std::string text;
  for (int i = 0; i < count; ++i) text += (i ? "|e" : "e") + std::to_string(i);
  return text;
}
// Test names say which case; GoogleTest prints the case by its name, not as bytes.
void PrintTo(const RegexCase& c, std::ostream* os) { *os << c.name; }

class KbRegex : public ::testing::TestWithParam<RegexCase> {};

TEST_P(KbRegex, IsRefusedOrMatchesInLinearTime) {
  const RegexCase& c = GetParam();
  Json doc = {{"id", "cuda/regex"}, {"regex", c.regex}};
  Result<KbEntry> e = kbEntryFromText(doc.dump(), "regex.json");
  ASSERT_TRUE(e.isOk()) << e.status().toString();
  KnowledgeBase kb;
  Status added = kb.add(e.value());
  if (c.messagePart) {
    ASSERT_FALSE(added.isOk()) << c.regex;
    EXPECT_NE(added.message().find(c.messagePart), std::string::npos) << added.message();
    return;
  }
  ASSERT_TRUE(added.isOk()) << added.toString();
  Result<KbMatcher> matcher = KbMatcher::build(kb);
  ASSERT_TRUE(matcher.isOk()) << matcher.status().toString();
  // The input that makes a backtracking engine take exponential time.
  KbScan scan = matcher.value().scanText(std::string(50000, 'a') + "!");
  EXPECT_EQ(scan.linesRead, 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Catalogue, KbRegex,
    ::testing::Values(
        RegexCase{"Unbalanced", "peer (access", "does not compile"},
        RegexCase{"BadEscape", "peer \\", "does not compile"}, RegexCase{"Backreference", "(a)\\1", "does not compile"},
        RegexCase{"RepeatTooLarge", "a{1001}", "does not compile"},
        RegexCase{"NestedRepeatTooLarge", "((a{1000}){1000}){1000}", "does not compile"},
        RegexCase{"MatchesEveryLine", "x*", "matches an empty line"},
        RegexCase{"EmptyAlternative", "peer|", "matches an empty line"},
        // Refused before compiling (the literal scan took
        // a minute over 150,000 alternatives), and where
        // RE2's DFA would give up on long lines.
        RegexCase{"TooManyAlternatives", alternatives(150000), "bytes long; at most 4096 are taken"},
        RegexCase{"RepeatTooWideForLongLines", "(?s).{1,1000}x", "compiles to 8004 RE2 instructions (at most 4000)"},
        RegexCase{"Catastrophic", "(a+)+$b", nullptr}, RegexCase{"ManyAlternatives", "(a|aa|aaa|aaaa|b)*c", nullptr}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(BadKbFile, LargerThanTheLimitIsSkippedWithAWarning) {
  testing::TempDir dir;
  std::string huge = R"({"id": "cuda/huge", "regex": "abc", "signature": ")" + std::string(5u << 20, 'x') + "\"}";
  dir.write("cuda/huge.json", huge);
  dir.write("cuda/good.json", kGoodSeed);
  std::vector<std::string> warnings;
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({dir.path()}, &warnings);
  ASSERT_TRUE(kb.isOk()) << kb.status().toString();
  EXPECT_EQ(kb.value().size(), 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("larger than 4 MiB"), std::string::npos) << warnings[0];
}

TEST(BadKbFile, ThatIsADeviceIsNotRead) {
  testing::TempDir dir;
  dir.write("cuda/good.json", kGoodSeed);
  std::filesystem::create_symlink("/dev/zero", dir.path() + "/cuda/endless.json");
  std::vector<std::string> warnings;
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({dir.path()}, &warnings);
  ASSERT_TRUE(kb.isOk()) << kb.status().toString();
  EXPECT_EQ(kb.value().size(), 1u);
}

// ---- logs ----------------------------------------------------------------------------------

class BadLog : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<KbEntry> e = kbEntryFromText(kGoodSeed, "seed");
    ASSERT_TRUE(e.isOk()) << e.status().toString();
    ASSERT_TRUE(kb_.add(e.value()).isOk());
    Result<KbMatcher> m = KbMatcher::build(kb_);
    ASSERT_TRUE(m.isOk()) << m.status().toString();
    matcher_.emplace(std::move(m).value());
  }
  KbScan scan(const std::string& log) { return matcher_->scanText(log); }
  static constexpr const char* kMessage = "peer access is not supported";
  KnowledgeBase kb_;
  std::optional<KbMatcher> matcher_;
};

TEST_F(BadLog, EmptyReadsNoLine) {
  KbScan s = scan("");
  EXPECT_EQ(s.linesRead, 0u);
  EXPECT_TRUE(s.matches.empty());
}

TEST_F(BadLog, BinaryIsReadAsLines) {
  std::string log;
  for (int i = 0; i < 70000; ++i) log += static_cast<char>((i * 7919) & 0xff);
  log += std::string("\n") + kMessage + "\n";
  KbScan s = scan(log);
  ASSERT_EQ(s.matches.size(), 1u);
  EXPECT_EQ(s.bytesRead, log.size());
}

TEST_F(BadLog, OneEndlessLineIsReadInBoundedPieces) {
  std::string log(10u << 20, 'x');
  log += kMessage;
  KbScan s = scan(log);
  EXPECT_EQ(s.linesRead, 1u);
  ASSERT_EQ(s.matches.size(), 1u);
  EXPECT_LE(s.matches[0].firstLineText.size(), kKbMaxLinePiece);
  EXPECT_EQ(s.matches[0].matchingLines, 1u);
}

TEST_F(BadLog, MessageAcrossThePieceBoundaryStillMatches) {
  const std::string message = kMessage;
  for (std::size_t before : {std::size_t{1}, message.size() / 2, message.size() - 1}) {
    std::string log(kKbMaxLinePiece - before, 'y');
    log += message + std::string(1000, 'z') + "\n";
    KbScan s = scan(log);
    ASSERT_EQ(s.matches.size(), 1u) << before << " bytes of the message before the cut";
    EXPECT_EQ(s.matches[0].firstLine, 1u);
    EXPECT_EQ(s.matches[0].matchingLines, 1u);
  }
}

TEST_F(BadLog, InvalidUtf8AroundAMessageStillMatches) {
  KbScan s = scan(std::string("\xff\xfe\xc3 ") + kMessage + " \xe2\x82\n");
  ASSERT_EQ(s.matches.size(), 1u);
  std::string json = kbScanToJson(s, 5);
  EXPECT_TRUE(nlohmann::json::accept(json)) << json;
}

TEST_F(BadLog, EscapeSequencesAndCarriageReturnsAreRemoved) {
  KbScan s = scan(std::string("\x1b[31mpeer access\x1b[0m is not \x1b]8;;http://x\x07supported\r\n"));
  ASSERT_EQ(s.matches.size(), 1u);
  EXPECT_EQ(s.matches[0].firstLineText.find('\x1b'), std::string::npos);
}

TEST_F(BadLog, NulBytesInALineDoNotEndIt) {
  std::string log = std::string("prefix\0\0", 8) + kMessage + "\n";
  KbScan s = scan(log);
  EXPECT_EQ(s.linesRead, 1u);
  EXPECT_EQ(s.matches.size(), 1u);
}

}  // namespace
}  // namespace gpupeer
