// The KB matcher's first look at a line: the literals each regex requires, the scan that finds
// them, and the matcher's answer against RE2 run entry by entry on every line we hold.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpupeer/kb_matcher.hpp"
#include "gpupeer/knowledge_base.hpp"
#include "kb/kb_regex.hpp"
#include "kb/literal_scan.hpp"
#include "kb/regex_literals.hpp"

namespace gpupeer::kb_detail {
namespace {

using Literals = std::optional<std::vector<std::string>>;

Literals L(std::initializer_list<const char*> items) {
  std::vector<std::string> v;
  for (const char* s : items) v.emplace_back(s);
  return v;
}

// The literals a line must hold one of (the scan's part of requiredLiterals), all branches.
Literals anyOf(std::string_view pattern) {
  std::optional<std::vector<RequiredLiterals>> r = requiredLiterals(pattern);
  if (!r) return std::nullopt;
  std::vector<std::string> out;
  for (const RequiredLiterals& b : *r) out.insert(out.end(), b.anyOf.begin(), b.anyOf.end());
  return out;
}

TEST(RegexLiterals, ConcatenationKeepsItsLongestRequiredPart) {
  EXPECT_EQ(anyOf("Peer access"), L({"peer access"}));  // lowercased
  EXPECT_EQ(anyOf(R"(GPU\d+ CANNOT Access Peer)"), L({" cannot access peer"}));
  EXPECT_EQ(anyOf(R"(cudaMalloc\(\) failed)"), L({"cudamalloc() failed"}));
  EXPECT_EQ(anyOf(R"(abc+def)"), L({"abc"}));      // one 'c' is certain, the run ends there
  EXPECT_EQ(anyOf(R"(a{b}cde)"), L({"a{b}cde"}));  // not a repetition: literal braces
  EXPECT_EQ(anyOf(R"(x{2}abc)"), L({"abc"}));
  EXPECT_EQ(anyOf(R"(Device\ peer)"), L({"device peer"}));  // RE2::QuoteMeta's "\ "
}

TEST(RegexLiterals, AlternationNeedsALiteralInEveryBranch) {
  EXPECT_EQ(anyOf("foo|barbaz"), L({"foo", "barbaz"}));
  EXPECT_EQ(anyOf("(?:cudaError|CUDA_ERROR)_X"), L({"cudaerror_x", "cuda_error_x"}));
  EXPECT_EQ(anyOf("foo|ba"), std::nullopt);  // "ba" is too short to look for
  EXPECT_EQ(anyOf("foo|"), std::nullopt);    // the empty branch matches anywhere
}

TEST(RegexLiterals, OptionalPartsAndClassesRequireNothing) {
  EXPECT_EQ(anyOf("(?:abcd)?xy"), std::nullopt);
  EXPECT_EQ(anyOf("(?:abcd)*efg"), L({"efg"}));
  EXPECT_EQ(anyOf("(?:abcd)+xy"), L({"abcd"}));
  EXPECT_EQ(anyOf(R"([a-z]+\s\d{3,}\b)"), std::nullopt);
  EXPECT_EQ(anyOf(R"(colou?r set)"), L({"colo"}));  // rarer than " set"
  EXPECT_EQ(anyOf(".*"), std::nullopt);
}

TEST(RegexLiterals, CaseInsensitivePartsAvoidLettersThatFoldOutsideAscii) {
  // (?i)k also matches U+212A (Kelvin) and (?i)s U+017F (long s): no ASCII literal covers them.
  EXPECT_EQ(anyOf("(?i:kernel)"), L({"ernel"}));
  EXPECT_EQ(anyOf("(?i)mask error"), L({" error"}));
  EXPECT_EQ(anyOf("(?i:stuck)"), L({"tuc"}));
  EXPECT_EQ(anyOf("(?i:ski) x"), std::nullopt);
  EXPECT_EQ(anyOf("(?i:pe) kernel"), L({"pe kernel"}));  // the flag ends with the group
  EXPECT_EQ(anyOf("(?i:café ok)"), L({"caf"}));          // non-ASCII may fold too
  EXPECT_EQ(anyOf("(?i:é ok)"), std::nullopt);
  EXPECT_EQ(anyOf("café ok"), L({"café ok"}));  // case-sensitive: bytes as written
}

TEST(RegexLiterals, UnknownSyntaxGivesNoLiteral) {
  EXPECT_EQ(anyOf(R"(\Qa.b\E)"), std::nullopt);
  EXPECT_EQ(anyOf(R"(\x41BCD)"), std::nullopt);
  EXPECT_EQ(anyOf("(abc"), std::nullopt);
  EXPECT_EQ(anyOf("abc)"), std::nullopt);
  EXPECT_EQ(anyOf("*abc"), std::nullopt);
}

TEST(RegexLiterals, ConcatenationJoinsExactGroupsAndPrefixes) {
  EXPECT_EQ(anyOf("in (?:nccl(?:Send|Recv\\w*)|pnccl)X"), L({"in ncclsend", "in ncclrecv", "in pnccl"}));
  EXPECT_EQ(anyOf("a(?:bc|de)f"), L({"abcf", "adef"}));
}

TEST(RegexLiterals, AllOfListsEveryRunOfABranch) {
  std::optional<std::vector<RequiredLiterals>> r = requiredLiterals(R"(^\s*GPU\d+\s.*\bNS\b)");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].anyOf, std::vector<std::string>{"gpu"});
  EXPECT_EQ((*r)[0].allOf, std::vector<std::string>{"ns"});  // too short to scan for, cheap to check
  r = requiredLiterals(R"(peer access|^\s*GPU\d+\s.*\bGNS\b)");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].anyOf, std::vector<std::string>{"peer access"});
  EXPECT_TRUE((*r)[0].allOf.empty());
  EXPECT_EQ((*r)[1].allOf.size(), 1u);                            // "gpu" or "gns" scanned for, the other checked
  EXPECT_FALSE(requiredLiterals(R"(GPU\d+ NS|CN)").has_value());  // "CN": too short to scan for
}

TEST(RegexLiterals, PlainLiteral) {
  EXPECT_EQ(plainLiteral(RE2::QuoteMeta("Peer access from (GPU0)")), "Peer access from (GPU0)");
  EXPECT_EQ(plainLiteral("GPU0"), "GPU0");
  EXPECT_EQ(plainLiteral("GPU\\d"), std::nullopt);
  EXPECT_EQ(plainLiteral("a|b"), std::nullopt);
}

TEST(LiteralScan, LowersAsciiOnly) {
  std::string all, lowered;
  for (int c = 1; c < 256; ++c) all += static_cast<char>(c);
  for (std::size_t start = 0; start < 9; ++start) {  // every alignment of the 8-byte steps
    lowerAsciiInto(std::string_view(all).substr(start), lowered);
    ASSERT_EQ(lowered.size(), all.size() - start);
    for (std::size_t i = 0; i < lowered.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(all[start + i]);
      unsigned char want = c >= 'A' && c <= 'Z' ? c + 32 : c;
      ASSERT_EQ(static_cast<unsigned char>(lowered[i]), want) << "byte " << int(c);
    }
  }
}

TEST(LiteralScan, FindsLiteralsAnywhereInALoweredLine) {
  LiteralScan scan;
  scan.add("peer access", 0);
  scan.add("nccl warn", 1);
  scan.add("nccl warn", 2);  // one literal, two owners
  scan.add("cuda_error", 3);
  scan.add("nccl_p2p_disable set", 4);  // keyed by its first 8 bytes
  scan.add("gpu", 5);                   // keyed by 3 bytes
  scan.add("link 0:", 6);               // keyed by 4 bytes, the rest compared
  auto found = [&scan](std::string_view text) {
    std::string lowered;
    lowerAsciiInto(text, lowered);
    std::vector<int> owners;
    scan.scan(lowered, owners);
    std::sort(owners.begin(), owners.end());
    return owners;
  };
  EXPECT_EQ(found("x NCCL WARN Cuda failure; Peer Access denied"), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(found("ends with CUDA_ERROR"), std::vector<int>{3});  // at the very end
  EXPECT_EQ(found("NCCL_P2P_DISABLE set by environment"), std::vector<int>{4});
  EXPECT_TRUE(found("NCCL_P2P_DISABLE=1").empty());  // the first 8 bytes alone are not enough
  EXPECT_TRUE(found("cuda_erro").empty());           // cut short
  EXPECT_EQ(found("GPU0 Link 0: 25 GB/s"), (std::vector<int>{5, 6}));
  EXPECT_EQ(found("Link 1: down"), std::vector<int>{});
  EXPECT_EQ(found("on gpu"), std::vector<int>{5});  // at the very end
  // A literal is keyed by three bytes inside it, away from common words ("nccl", digits): it
  // is found at the line's start and end all the same, and not when cut.
  EXPECT_EQ(found("nccl_p2p_disable set"), std::vector<int>{4});
  EXPECT_TRUE(found("x nccl_p2p_disable se").empty());
  EXPECT_TRUE(found("ccl_p2p_disable set").empty());
  EXPECT_TRUE(found("pe").empty());
  EXPECT_TRUE(found("").empty());
}

// What the matcher must answer: every entry whose regex RE2 finds in the line, in KB order.
std::vector<const KbEntry*> reference(const KnowledgeBase& kb, const std::vector<std::unique_ptr<RE2>>& res,
                                      std::string_view line) {
  std::vector<const KbEntry*> out;
  for (std::size_t i = 0; i < res.size(); ++i)
    if (RE2::PartialMatch(line, *res[i])) out.push_back(&kb.entries()[i]);
  return out;
}

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(KbLiteralGate, MatcherAgreesWithEveryRegexOnEveryLineWeHold) {
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({GPUPEER_SOURCE_KB_DIR}, nullptr);
  ASSERT_TRUE(kb.isOk()) << kb.status().toString();
  ASSERT_GT(kb.value().size(), 0u);
  Result<KbMatcher> m = KbMatcher::build(kb.value());
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  std::vector<std::unique_ptr<RE2>> res;
  for (const KbEntry& e : kb.value().entries()) res.push_back(std::make_unique<RE2>(e.regex, kbRegexOptions()));

  std::vector<std::string> lines;
  nlohmann::json cases = nlohmann::json::parse(readAll(std::string(GPUPEER_TEST_DATA_DIR) + "/kb_cases.json"));
  for (const nlohmann::json& c : cases)
    for (const char* key : {"positive", "negative"})
      for (const std::string& s : c.value(key, std::vector<std::string>{})) {
        lines.push_back(s);
        // The same line upper- and lower-cased: case-insensitive parts must still be found.
        std::string upper = s, lower = s;
        for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        lines.push_back(upper);
        lines.push_back(lower);
      }
  for (const auto& f : std::filesystem::recursive_directory_iterator(GPUPEER_TEST_DATA_DIR)) {
    if (!f.is_regular_file() || f.file_size() > (1 << 20)) continue;
    std::istringstream in(readAll(f.path().string()));
    for (std::string line; std::getline(in, line);) lines.push_back(normaliseLogLine(line));
  }
  std::size_t matched = 0;
  for (const std::string& line : lines) {
    std::vector<const KbEntry*> want = reference(kb.value(), res, line);
    EXPECT_EQ(m.value().matchLine(line), want) << line;
    matched += !want.empty();
  }
  EXPECT_GT(matched, 300u) << "the corpus should exercise many entries";
}

TEST(KbLiteralGate, EntryWithoutLiteralRunsOnEveryLine) {
  KnowledgeBase kb;
  KbEntry a, b;
  a.id = "test/no-literal";
  a.regex = R"(^\d+ [a-z]{2}$)";
  b.id = "test/kelvin";
  b.regex = "(?i:kernel oops)";
  ASSERT_TRUE(kb.add(a).isOk());
  ASSERT_TRUE(kb.add(b).isOk());
  Result<KbMatcher> m = KbMatcher::build(kb);
  ASSERT_TRUE(m.isOk());
  ASSERT_EQ(m.value().matchLine("42 ok").size(), 1u);
  EXPECT_EQ(m.value().matchLine("42 ok")[0]->id, "test/no-literal");
  // U+212A KELVIN SIGN folds to 'k': RE2 matches it, so must the matcher.
  ASSERT_EQ(m.value()
                .matchLine("\xe2\x84\xaa"
                           "ERNEL OOPS")
                .size(),
            1u);
  EXPECT_TRUE(m.value().matchLine("kernel ok").empty());
}

}  // namespace
}  // namespace gpupeer::kb_detail
