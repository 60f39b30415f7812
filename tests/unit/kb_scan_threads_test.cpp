// KbMatcher::scan with worker threads gives exactly what it gives on the calling thread alone:
// the same matches, counts, first lines, lines and bytes read, and the same calls of the line
// observer in the same order, on logs of many batches (small batches here, so a few MiB make
// dozens), long lines whose pieces straddle batches, CRLF and escape sequences, an empty
// stream and a stream that fails part-way.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <streambuf>

#include "gpupeer/kb_matcher.hpp"
#include "gpupeer/knowledge_base.hpp"
#include "gpupeer/tool_output.hpp"

namespace gpupeer {
namespace {

const std::string kDataDir = GPUPEER_TEST_DATA_DIR;

// The repository's KB, with the tool-output triggers as extra patterns (as explain builds it).
struct RepoMatcher {
  KnowledgeBase kb;
  std::unique_ptr<KbMatcher> matcher;
  RepoMatcher() {
    Result<KnowledgeBase> loaded = KnowledgeBase::loadDirectories({GPUPEER_SOURCE_KB_DIR}, nullptr);
    if (!loaded.isOk()) throw std::runtime_error("KB did not load: " + loaded.status().toString());
    kb = std::move(loaded).value();
    Result<KbMatcher> m = KbMatcher::build(kb, ToolOutputReader::triggerPatterns());
    if (!m.isOk()) throw std::runtime_error("matcher not built: " + m.status().toString());
    matcher = std::make_unique<KbMatcher>(std::move(m).value());
  }
};

const RepoMatcher& repo() {
  static const RepoMatcher* r = new RepoMatcher;
  return *r;
}

struct ObservedLine {
  std::string text;
  std::uint64_t number;
  std::vector<int> extras;
  bool operator==(const ObservedLine&) const = default;
};

// One scan's whole outcome, comparable with ==.
struct Outcome {
  bool ok = false;
  std::string error;
  std::vector<std::string> matches;  // id, first line, its text's size and hash, count
  std::uint64_t linesRead = 0, bytesRead = 0;
  std::vector<ObservedLine> lines;
};

Outcome scan(std::istream& in, std::optional<unsigned> threads, std::size_t batchBytes) {
  Outcome out;
  KbScanOptions options;
  options.matchThreads = threads;
  options.batchBytes = batchBytes;
  Result<KbScan> s = repo().matcher->scan(
      in,
      [&out](std::string_view line, std::uint64_t n, std::span<const int> extras) {
        out.lines.push_back({std::string(line), n, std::vector<int>(extras.begin(), extras.end())});
      },
      options);
  out.ok = s.isOk();
  if (!s.isOk()) {
    out.error = s.status().toString();
    return out;
  }
  for (const KbMatch& m : s.value().matches)
    out.matches.push_back(fmt::format("{} line {} ({} bytes, hash {:x}) x{}", m.entry->id, m.firstLine,
                                      m.firstLineText.size(), std::hash<std::string>{}(m.firstLineText),
                                      m.matchingLines));
  out.linesRead = s.value().linesRead;
  out.bytesRead = s.value().bytesRead;
  return out;
}

Outcome scanText(const std::string& text, std::optional<unsigned> threads, std::size_t batchBytes) {
  std::istringstream in(text);
  return scan(in, threads, batchBytes);
}

// Every text file of tests/data, then every positive line of kb_cases.json plain, in colour
// and with CRLF: a log with tool output, matches and escape sequences throughout.
std::string corpus() {
  std::string text;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(kDataDir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const std::filesystem::path& p : files) {
    std::ifstream f(p, std::ios::binary);
    text += std::string(std::istreambuf_iterator<char>(f), {});
    text += '\n';
  }
  nlohmann::json cases = nlohmann::json::parse(std::ifstream(kDataDir + "/kb_cases.json"));
  for (const nlohmann::json& c : cases)
    for (const std::string& p : c.value("positive", std::vector<std::string>{}))
      text += p + "\n\x1b[1;31m" + p + "\x1b[0m\n" + p + "\r\n";
  return text;
}

void expectSameOutcome(const Outcome& threaded, const Outcome& alone) {
  EXPECT_EQ(threaded.ok, alone.ok);
  EXPECT_EQ(threaded.error, alone.error);
  EXPECT_EQ(threaded.matches, alone.matches);
  EXPECT_EQ(threaded.linesRead, alone.linesRead);
  EXPECT_EQ(threaded.bytesRead, alone.bytesRead);
  ASSERT_EQ(threaded.lines.size(), alone.lines.size());
  for (std::size_t i = 0; i < alone.lines.size(); ++i)
    ASSERT_TRUE(threaded.lines[i] == alone.lines[i])  // (lines of 64 KiB: not printed)
        << "observer call " << i << ": line " << threaded.lines[i].number << " instead of " << alone.lines[i].number;
}

TEST(KbScanThreads, CorpusRepeatedOverManyBatchesScansAsOnOneThread) {
  std::string unit = corpus();
  std::string log;
  while (log.size() < (3u << 20)) log += unit;
  Outcome alone = scanText(log, 0, 64 * 1024);
  ASSERT_TRUE(alone.ok) << alone.error;
  ASSERT_FALSE(alone.matches.empty());
  ASSERT_GT(alone.linesRead, 10000u);
  bool anyExtras = std::any_of(alone.lines.begin(), alone.lines.end(), [](const auto& l) { return !l.extras.empty(); });
  EXPECT_TRUE(anyExtras) << "the corpus holds tool output";
  for (unsigned threads : {1u, 3u}) {
    SCOPED_TRACE(threads);
    expectSameOutcome(scanText(log, threads, 64 * 1024), alone);
  }
  expectSameOutcome(scanText(log, std::nullopt, 64 * 1024), alone);  // the default count
  expectSameOutcome(scanText(log, std::nullopt, KbScanOptions{}.batchBytes), alone);
}

TEST(KbScanThreads, LongLinesWhosePiecesStraddleBatches) {
  nlohmann::json cases = nlohmann::json::parse(std::ifstream(kDataDir + "/kb_cases.json"));
  std::string log;
  int n = 0;
  for (const nlohmann::json& c : cases)
    for (const std::string& p : c.value("positive", std::vector<std::string>{})) {
      // A message inside lines of 100-300 KB (2-5 pieces each), at varying places.
      std::string pad(50'000 + (n * 37'813) % 120'000, n % 2 ? 'x' : ' ');
      log += pad + p + pad + (n % 3 ? "\n" : "\x1b[0m\r\n") + p + "\n";
      ++n;
      if (n == 24) break;
    }
  Outcome alone = scanText(log, 0, 100'000);
  ASSERT_TRUE(alone.ok) << alone.error;
  ASSERT_GT(alone.lines.size(), alone.linesRead) << "long lines come as several pieces";
  for (unsigned threads : {1u, 2u}) {
    SCOPED_TRACE(threads);
    expectSameOutcome(scanText(log, threads, 100'000), alone);
    expectSameOutcome(scanText(log, threads, 1), alone);  // a batch per piece
  }
}

TEST(KbScanThreads, EmptyStreamAndOneShortBatch) {
  Outcome alone = scanText("", 0, 64 * 1024);
  EXPECT_TRUE(alone.ok);
  EXPECT_EQ(alone.linesRead, 0u);
  EXPECT_TRUE(alone.lines.empty());
  expectSameOutcome(scanText("", 2, 64 * 1024), alone);
  const std::string one = "RuntimeError: CUDA error: peer access is not supported between these two devices\r\n";
  expectSameOutcome(scanText(one, 2, 64 * 1024), scanText(one, 0, 64 * 1024));
}

// Serves `text`, then fails: the read error of a disk or pipe part-way through a log.
class FailingLog : public std::streambuf {
 public:
  explicit FailingLog(std::string text) : text_(std::move(text)) {}

 protected:
  int_type underflow() override {
    if (served_) throw std::runtime_error("device gone");  // istream turns it into badbit
    served_ = true;
    setg(text_.data(), text_.data(), text_.data() + text_.size());
    return traits_type::to_int_type(text_[0]);
  }

 private:
  std::string text_;
  bool served_ = false;
};

TEST(KbScanThreads, StreamFailingPartWayReportsTheSameErrorAfterTheSameLines) {
  std::string log;
  while (log.size() < (1u << 20)) log += corpus();
  auto failing = [&log](std::optional<unsigned> threads) {
    FailingLog source(log);
    std::istream in(&source);
    return scan(in, threads, 64 * 1024);
  };
  Outcome alone = failing(0);
  ASSERT_FALSE(alone.ok);
  EXPECT_NE(alone.error.find("read error"), std::string::npos) << alone.error;
  EXPECT_GT(alone.lines.size(), 10000u);
  expectSameOutcome(failing(2), alone);
}

}  // namespace
}  // namespace gpupeer
