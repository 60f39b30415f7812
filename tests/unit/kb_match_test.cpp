// Matching logs against the KB: normalisation, streaming with bounded memory, linear time on
// hostile patterns, and ranking the specific cause above the generic wrapper.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <streambuf>

#include "gpupeer/kb_matcher.hpp"
#include "gpupeer/kb_render.hpp"
#include "gpupeer/knowledge_base.hpp"
#include "kb_test_support.hpp"

namespace gpupeer {
namespace {

using testing::TempDir;

// The fixture KB plus the built-in kb/ (when present), kept alive together with its matcher.
struct Loaded {
  KnowledgeBase kb;
  std::unique_ptr<KbMatcher> matcher;
};

Loaded load(const std::vector<std::string>& dirs) {
  Loaded l;
  std::vector<std::string> warnings;
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories(dirs, &warnings);
  // A helper cannot ASSERT_: an exception fails the test with the reason and stops it.
  if (!kb.isOk()) throw std::runtime_error("KB did not load: " + kb.status().toString());
  l.kb = std::move(kb).value();
  Result<KbMatcher> m = KbMatcher::build(l.kb);
  if (!m.isOk()) throw std::runtime_error("matcher not built: " + m.status().toString());
  l.matcher = std::make_unique<KbMatcher>(std::move(m).value());
  return l;
}

Loaded loadFixture(const TempDir& dir) {
  testing::writeFixtureKb(dir);
  return load({dir.path()});
}

std::vector<std::string> ids(const KbScan& scan) {
  std::vector<std::string> out;
  for (const KbMatch& m : scan.matches) out.push_back(m.entry->id);
  return out;
}

KbEntry entry(std::string id, std::string regex) {
  KbEntry e;
  e.id = std::move(id);
  e.regex = std::move(regex);
  return e;
}

TEST(KbNormalise, RemovesAnsiEscapesAndCarriageReturns) {
  EXPECT_EQ(normaliseLogLine("\x1b[1;31mRuntimeError\x1b[0m: CUDA error"), "RuntimeError: CUDA error");
  EXPECT_EQ(normaliseLogLine("plain line\r"), "plain line");
  EXPECT_EQ(normaliseLogLine("crlf twice\r\r"), "crlf twice");
  EXPECT_EQ(normaliseLogLine("a\rb"), "a\rb");  // only a trailing \r is a line ending
  EXPECT_EQ(normaliseLogLine("\x1b[38;5;196mred\x1b[K text\x1b[2J"), "red text");
  EXPECT_EQ(normaliseLogLine("\x1b]8;;https://x.io\x07link\x1b]8;;\x1b\\ end"), "link end");  // OSC 8
  EXPECT_EQ(normaliseLogLine("\x1b(Bcharset \x1b"
                             "7saved"),
            "charset saved");
  EXPECT_EQ(normaliseLogLine("dangling \x1b"), "dangling ");
  EXPECT_EQ(normaliseLogLine(""), "");
}

TEST(KbMatch, MatchesThroughAnsiAndCrlf) {
  TempDir dir;
  Loaded l = loadFixture(dir);
  KbScan s = l.matcher->scanText(
      "\x1b[31mRuntimeError: CUDA error: peer access is not\x1b[0m supported between these two devices\r\n"
      "InternalError: Peer access from GPU:0 to GPU:1 is not supported by the current CUDA driver or device "
      "topology\r\n");
  EXPECT_EQ(ids(s),
            (std::vector<std::string>{"tensorflow/gpu-peer-access-error", "cuda/peer-access-unsupported-by-hardware"}));
  EXPECT_EQ(s.linesRead, 2u);
  // The stored line is the normalised one.
  EXPECT_EQ(s.matches[1].firstLineText,
            "RuntimeError: CUDA error: peer access is not supported between these two devices");
}

TEST(KbMatch, MatchesInsidePythonTracebacksAndNcclPrefixes) {
  TempDir dir;
  Loaded l = loadFixture(dir);
  KbScan s = l.matcher->scanText(
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 42, in <module>\n"
      "    model = DDP(model, device_ids=[rank])\n"
      "  File \"/usr/lib/python3/dist-packages/torch/nn/parallel/distributed.py\", line 646, in __init__\n"
      "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, "
      "unhandled cuda error, NCCL version 2.14.3\n");
  ASSERT_EQ(ids(s), std::vector<std::string>{"test/unhandled-cuda-error"});
  EXPECT_EQ(s.matches[0].firstLine, 5u);

  s = l.matcher->scanText(
      "gpu-node-07:2841:2907 [1] transport/p2p.cc:273 NCCL WARN failed to open CUDA IPC handle : 217 "
      "peer access is not supported between these two devices\n");
  EXPECT_EQ(ids(s), (std::vector<std::string>{"test/nccl-ipc-217", "cuda/peer-access-unsupported-by-hardware"}));
}

TEST(KbMatch, SpecificEntryRanksAboveWrapper) {
  TempDir dir;
  Loaded l = loadFixture(dir);
  // The wrapper's line comes first and its regex is the longest: only the tag puts it last.
  KbScan s = l.matcher->scanText(
      "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled cuda error, NCCL version 2.14.3\n"
      "host:1234:1240 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC\n"
      "host:1234:1240 [0] transport/p2p.cc:273 NCCL WARN failed to open CUDA IPC handle : 217 peer access "
      "is not supported between these two devices\n"
      "host:1234:1240 [0] NCCL INFO transport/p2p.cc:327 -> 1\n"
      "ncclUnhandledCudaError: Call to CUDA function failed.\n");
  ASSERT_EQ(ids(s), (std::vector<std::string>{"test/nccl-ipc-217", "cuda/peer-access-unsupported-by-hardware",
                                              "test/unhandled-cuda-error"}));
  EXPECT_EQ(s.matches[0].firstLine, 3u);
  EXPECT_EQ(s.matches[2].firstLine, 1u);
  EXPECT_EQ(s.matches[2].matchingLines, 2u);
}

TEST(KbMatch, RanksLongerRegexThenEarlierLineThenId) {
  KnowledgeBase kb;
  ASSERT_TRUE(kb.add(entry("z/short", "peer")).isOk());
  ASSERT_TRUE(kb.add(entry("a/longer", "peer access")).isOk());
  ASSERT_TRUE(kb.add(entry("b/late", "devices")).isOk());
  ASSERT_TRUE(kb.add(entry("a/late", "devices")).isOk());
  ASSERT_TRUE(kb.add(entry("c/early", "between")).isOk());
  Result<KbMatcher> m = KbMatcher::build(kb);
  ASSERT_TRUE(m.isOk());
  KbScan s = m.value().scanText("between\npeer access\ndevices\n");
  EXPECT_EQ(ids(s), (std::vector<std::string>{"a/longer", "c/early", "a/late", "b/late", "z/short"}));
}

TEST(KbMatch, HostilePatternRunsInLinearTime) {
  KnowledgeBase kb;
  ASSERT_TRUE(kb.add(entry("x/nested-quantifier", "(a+)+$")).isOk());
  ASSERT_TRUE(kb.add(entry("x/nested-quantifier-b", "(a+)+b")).isOk());
  Result<KbMatcher> m = KbMatcher::build(kb);
  ASSERT_TRUE(m.isOk());
  // A backtracking engine needs 2^n steps for (a+)+b on n a's that lack the b; RE2 makes one
  // pass. 100 KB is more than one piece, so this also runs through the cut.
  std::string as(100 * 1000, 'a');
  KbScan s = m.value().scanText(as);
  EXPECT_EQ(ids(s), std::vector<std::string>{"x/nested-quantifier"});
  EXPECT_EQ(s.linesRead, 1u);
  s = m.value().scanText(as + "c");
  EXPECT_TRUE(s.matches.empty() || ids(s) == std::vector<std::string>{"x/nested-quantifier"})
      << "the first 64 KiB piece ends in 'a', so `$` may match at the cut";
  s = m.value().scanText(as + "b\n");
  std::vector<std::string> found = ids(s);
  EXPECT_NE(std::find(found.begin(), found.end(), "x/nested-quantifier-b"), found.end());
}

TEST(KbMatch, LineLongerThanPieceIsCutNotDropped) {
  KnowledgeBase kb;
  ASSERT_TRUE(kb.add(entry("x/needle", "needle in a haystack")).isOk());
  ASSERT_TRUE(kb.add(entry("x/after", "after the long line")).isOk());
  Result<KbMatcher> m = KbMatcher::build(kb);
  ASSERT_TRUE(m.isOk());
  // 200 KiB line with the needle in its third piece, then a normal line.
  std::string longLine(kKbMaxLinePiece * 2 + 100, 'x');
  longLine += " needle in a haystack ";
  longLine += std::string(kKbMaxLinePiece / 2, 'y');
  KbScan s = m.value().scanText("first\n" + longLine + "\nafter the long line\n");
  EXPECT_EQ(s.linesRead, 3u);
  ASSERT_EQ(s.matches.size(), 2u);
  const KbMatch* needle = s.matches[0].entry->id == "x/needle" ? &s.matches[0] : &s.matches[1];
  const KbMatch* after = needle == &s.matches[0] ? &s.matches[1] : &s.matches[0];
  EXPECT_EQ(needle->firstLine, 2u);
  EXPECT_LE(needle->firstLineText.size(), kKbMaxLinePiece);
  EXPECT_EQ(after->firstLine, 3u);

  // A line of exactly one piece followed by '\n' is one line, not a line and an empty one.
  s = m.value().scanText(std::string(kKbMaxLinePiece, 'z') + "\nafter the long line");
  EXPECT_EQ(s.linesRead, 2u);
  ASSERT_EQ(s.matches.size(), 1u);
  EXPECT_EQ(s.matches[0].firstLine, 2u);
}

TEST(KbMatch, CountsLinesLikeWc) {
  KnowledgeBase kb;
  ASSERT_TRUE(kb.add(entry("x/x", "x")).isOk());
  Result<KbMatcher> m = KbMatcher::build(kb);
  ASSERT_TRUE(m.isOk());
  EXPECT_EQ(m.value().scanText("").linesRead, 0u);
  EXPECT_EQ(m.value().scanText("a").linesRead, 1u);
  EXPECT_EQ(m.value().scanText("a\n").linesRead, 1u);
  EXPECT_EQ(m.value().scanText("a\n\nb").linesRead, 3u);
  EXPECT_EQ(m.value().scanText("a\nx\nx x\n").matches.at(0).matchingLines, 2u);
}

// Benign log text made on the fly, so the 20 MB input never exists in memory at once.
class GeneratedLog : public std::streambuf {
 public:
  explicit GeneratedLog(std::size_t bytes) : left_(bytes) {}
  std::size_t produced = 0;

 protected:
  int_type underflow() override {
    if (left_ == 0) return traits_type::eof();
    static const char* kLines[] = {
        "host:1234:5678 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
        "\x1b[32mEpoch 3/10\x1b[0m step {} loss=0.4321 lr=3.0e-04 grad_norm=1.27 tokens/s=48211",
        "host:1234:5678 [1] NCCL INFO comm 0x55d0c0a0 rank 1 nranks 2 cudaDev 1 busId 2a000 - Init COMPLETE",
        "[2026-11-22 02:10:11,123] INFO checkpoint saved to /ckpt/step_{}.pt\r",
        "  0%|          | 0/1000 [00:00<?, ?it/s]\r 12%|#2        | 120/1000 [00:08<01:02, 14.1it/s]",
        "Device 0: NVIDIA H200, 143771 MiB, compute capability 9.0, peer access to device 1: yes",
    };
    line_ = fmt::format(fmt::runtime(kLines[n_ % std::size(kLines)]), n_);
    line_ += '\n';
    ++n_;
    if (line_.size() > left_) line_.resize(left_);
    left_ -= line_.size();
    produced += line_.size();
    setg(line_.data(), line_.data(), line_.data() + line_.size());
    return traits_type::to_int_type(line_[0]);
  }

 private:
  std::size_t left_;
  std::size_t n_ = 0;
  std::string line_;
};

TEST(KbMatch, StreamsTwentyMegabytesOfBenignLog) {
  TempDir dir;
  testing::writeFixtureKb(dir);
  Loaded l = load({dir.path()});
  GeneratedLog source(20u << 20);
  std::istream in(&source);
  Result<KbScan> s = l.matcher->scan(in);
  ASSERT_TRUE(s.isOk());
  EXPECT_TRUE(s.value().matches.empty()) << s.value().matches[0].entry->id << " matched line "
                                         << s.value().matches[0].firstLine << ": "
                                         << s.value().matches[0].firstLineText;
  EXPECT_EQ(s.value().bytesRead, 20u << 20);
  EXPECT_GT(s.value().linesRead, 200000u);
}

TEST(KbMatch, EmptyKbMatchesNothing) {
  KnowledgeBase kb;
  Result<KbMatcher> m = KbMatcher::build(kb);
  ASSERT_TRUE(m.isOk());
  KbScan s = m.value().scanText("RuntimeError: CUDA error: peer access is not supported\n");
  EXPECT_TRUE(s.matches.empty());
  EXPECT_EQ(s.linesRead, 1u);
}

TEST(KbMatch, MatchLineReportsEntriesInKbOrder) {
  TempDir dir;
  Loaded l = loadFixture(dir);
  std::vector<const KbEntry*> hits = l.matcher->matchLine(
      "NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two devices");
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_LT(hits[0], hits[1]);
}

TEST(KbRender, TextListsCauseDeadEndsAndWorkaroundsBestFirst) {
  TempDir dir;
  Loaded l = loadFixture(dir);
  KbScan s =
      l.matcher->scanText("x\nRuntimeError: CUDA error: peer access is not supported between these two devices\n");
  std::string text = renderKbScanText(s, 5);
  EXPECT_NE(text.find("1. cuda/peer-access-unsupported-by-hardware"), std::string::npos) << text;
  EXPECT_NE(text.find("line 2: RuntimeError"), std::string::npos) << text;
  EXPECT_NE(text.find("Cause: The two GPUs"), std::string::npos);
  EXPECT_NE(text.find("Do not try:"), std::string::npos);
  EXPECT_NE(text.find("(fails 90%)"), std::string::npos) << text;
  std::size_t tryAt = text.find("Try:");
  ASSERT_NE(tryAt, std::string::npos);
  std::size_t best = text.find("export NCCL_P2P_DISABLE=1", tryAt);
  std::size_t second = text.find("torch.cuda.set_device(rank)", tryAt);
  ASSERT_NE(best, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  EXPECT_LT(best, second);  // 75% before 70%
  EXPECT_NE(text.find("(works 75%)"), std::string::npos);
  EXPECT_NE(text.find("Docs: https://docs.nvidia.com/"), std::string::npos);

  s = l.matcher->scanText(
      "host:1:2 [0] NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two "
      "devices\n");
  text = renderKbScanText(s, 5);
  EXPECT_NE(text.find("Often leads to: test/unhandled-cuda-error (90%)"), std::string::npos) << text;
}

TEST(KbRender, TopLimitsAndJsonParses) {
  TempDir dir;
  Loaded l = loadFixture(dir);
  KbScan s = l.matcher->scanText(
      "host:1:2 [0] NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two "
      "devices\n"
      "unhandled cuda error \xff\xfe (invalid UTF-8)\nlast\n");
  ASSERT_EQ(s.matches.size(), 3u);
  std::string text = renderKbScanText(s, 1);
  EXPECT_EQ(text.find("2. "), std::string::npos);
  EXPECT_NE(text.find("2 more matched"), std::string::npos) << text;

  nlohmann::json j = nlohmann::json::parse(kbScanToJson(s, 2));
  EXPECT_EQ(j["linesRead"], 3);
  EXPECT_EQ(j["totalMatches"], 3);
  ASSERT_EQ(j["matches"].size(), 2u);
  EXPECT_EQ(j["matches"][0]["id"], "test/nccl-ipc-217");
  EXPECT_EQ(j["matches"][0]["line"], 1);
  EXPECT_EQ(j["matches"][0]["workarounds"][0]["how"], "export NCCL_P2P_DISABLE=1");
  EXPECT_EQ(j["matches"][0]["leadsTo"][0]["id"], "test/unhandled-cuda-error");
  EXPECT_EQ(nlohmann::json::parse(kbScanToJson(s, 0))["matches"].size(), 3u);

  KbScan none = l.matcher->scanText("Test passed\n");
  EXPECT_NE(renderKbScanText(none, 5).find("No known failure matched the 1 line read"), std::string::npos);
}

}  // namespace
}  // namespace gpupeer
