// Every entry of the built-in KB (kb/) against its schema, its test cases, benign logs and the
// seed signatures. These iterate over whatever kb/ holds, so they stay correct while it grows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "gpupeer/kb_matcher.hpp"
#include "gpupeer/kb_render.hpp"
#include "gpupeer/knowledge_base.hpp"
#include "kb/json_schema.hpp"

namespace gpupeer {
namespace {

namespace fs = std::filesystem;

const std::string kKbDir = GPUPEER_SOURCE_KB_DIR;
const std::string kDataDir = GPUPEER_TEST_DATA_DIR;

// kb/ loaded once for all tests here.
class KbData : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    loaded_ = new Loaded;
    Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({kKbDir}, &loaded_->warnings);
    if (kb.isOk()) loaded_->kb = std::move(kb).value();
    Result<KbMatcher> m = KbMatcher::build(loaded_->kb);
    if (m.isOk()) loaded_->matcher = std::make_unique<KbMatcher>(std::move(m).value());
  }
  static void TearDownTestSuite() {
    delete loaded_;
    loaded_ = nullptr;
  }

  const KnowledgeBase& kb() const { return loaded_->kb; }
  const KbMatcher& matcher() const { return *loaded_->matcher; }
  void requireEntries() const {
    if (kb().size() == 0) GTEST_SKIP() << "kb/ holds no entries yet";
    ASSERT_NE(loaded_->matcher, nullptr);
  }

  struct Loaded {
    KnowledgeBase kb;
    std::unique_ptr<KbMatcher> matcher;
    std::vector<std::string> warnings;
  };
  static inline Loaded* loaded_ = nullptr;
};

std::vector<fs::path> entryFiles() {
  std::vector<fs::path> files;
  for (const auto& f : fs::recursive_directory_iterator(kKbDir))
    if (f.path().extension() == ".json" && f.path().filename() != "schema.json") files.push_back(f.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string joinRanked(const KbScan& s) {
  std::string out;
  for (const KbMatch& m : s.matches) out += (out.empty() ? "" : ", ") + m.entry->id;
  return out.empty() ? "(nothing)" : out;
}

TEST_F(KbData, AtLeast130Entries) { EXPECT_GE(kb().size(), 130u) << "kb/ has " << kb().size() << " loadable entries"; }

TEST_F(KbData, EveryFileLoadsWithoutWarnings) {
  for (const std::string& w : loaded_->warnings) ADD_FAILURE() << w;
}

TEST_F(KbData, EveryEntryValidatesAgainstSchema) {
  requireEntries();
  std::ifstream schemaFile(kKbDir + "/schema.json");
  ASSERT_TRUE(schemaFile) << "kb/schema.json is missing";
  nlohmann::json schema = nlohmann::json::parse(schemaFile, nullptr, false);
  ASSERT_FALSE(schema.is_discarded()) << "kb/schema.json is not valid JSON";
  for (const fs::path& file : entryFiles()) {
    std::ifstream in(file);
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded()) {
      ADD_FAILURE() << file << ": not valid JSON";
      continue;
    }
    for (const std::string& e : validateJsonSchema(schema, doc)) ADD_FAILURE() << file.string() << ": " << e;
  }
}

TEST_F(KbData, IdIsThePathWithoutJson) {
  requireEntries();
  for (const KbEntry& e : kb().entries()) {
    fs::path rel = fs::relative(e.sourceFile, kKbDir);
    EXPECT_EQ(e.id + ".json", rel.generic_string()) << e.sourceFile;
  }
}

TEST_F(KbData, EveryTransitionIdExists) {
  requireEntries();
  for (const KbEntry& e : kb().entries())
    for (const auto* edges : {&e.leadsTo, &e.precededBy, &e.confusedWith})
      for (const KbTransition& t : *edges) {
        EXPECT_NE(kb().find(t.id), nullptr) << e.id << " refers to unknown id " << t.id;
        EXPECT_NE(t.id, e.id) << e.id << " refers to itself";
      }
}

struct Case {
  std::string id;
  std::vector<std::string> positive, negative;
};

std::vector<Case> loadCases() {
  std::vector<Case> cases;
  std::ifstream in(kDataDir + "/kb_cases.json");
  if (!in) return cases;
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  EXPECT_TRUE(doc.is_array()) << "tests/data/kb_cases.json is not a JSON array";
  if (!doc.is_array()) return cases;
  for (const nlohmann::json& c : doc) {
    Case k;
    k.id = c.value("id", "");
    k.positive = c.value("positive", std::vector<std::string>{});
    k.negative = c.value("negative", std::vector<std::string>{});
    cases.push_back(std::move(k));
  }
  return cases;
}

TEST_F(KbData, PositivesRankTheirEntryFirst) {
  requireEntries();
  std::vector<Case> cases = loadCases();
  if (cases.empty()) GTEST_SKIP() << "tests/data/kb_cases.json not present yet";
  // Recall over the labelled corpus: the share of positive lines whose own entry ranks first.
  std::size_t total = 0, rankedFirst = 0;
  for (const Case& c : cases) {
    EXPECT_NE(kb().find(c.id), nullptr) << "kb_cases.json names unknown id " << c.id;
    EXPECT_FALSE(c.positive.empty()) << c.id << " has no positive case";
    for (const std::string& text : c.positive) {
      KbScan s = matcher().scanText(text);
      bool first = !s.matches.empty() && s.matches[0].entry->id == c.id;
      ++total;
      if (first) ++rankedFirst;
      EXPECT_TRUE(first) << c.id << ": positive \"" << text << "\" ranked: " << joinRanked(s);
    }
  }
  std::cout << "[   KB     ] recall " << rankedFirst << "/" << total << " positive lines ranked their entry first ("
            << kb().size() << " entries, " << cases.size() << " cases)\n";
  RecordProperty("recall_ranked_first", static_cast<int>(rankedFirst));
  RecordProperty("recall_total", static_cast<int>(total));
  EXPECT_GT(total, 0u);
  EXPECT_EQ(rankedFirst, total) << "recall below 100% on tests/data/kb_cases.json";
}

TEST_F(KbData, NegativesDoNotMatchTheirEntry) {
  requireEntries();
  std::vector<Case> cases = loadCases();
  if (cases.empty()) GTEST_SKIP() << "tests/data/kb_cases.json not present yet";
  for (const Case& c : cases)
    for (const std::string& text : c.negative) {
      KbScan s = matcher().scanText(text);
      for (const KbMatch& m : s.matches)
        EXPECT_NE(m.entry->id, c.id) << c.id << ": negative \"" << text << "\" matches it";
    }
}

TEST_F(KbData, EveryEntryHasCases) {
  requireEntries();
  std::vector<Case> cases = loadCases();
  if (cases.empty()) GTEST_SKIP() << "tests/data/kb_cases.json not present yet";
  std::set<std::string> covered;
  for (const Case& c : cases)
    if (!c.positive.empty()) covered.insert(c.id);
  for (const KbEntry& e : kb().entries())
    EXPECT_TRUE(covered.count(e.id)) << e.id << " has no positive case in tests/data/kb_cases.json";
}

TEST_F(KbData, BenignLogMatchesNothing) {
  requireEntries();
  std::ifstream in(kDataDir + "/benign_log.txt", std::ios::binary);
  if (!in) GTEST_SKIP() << "tests/data/benign_log.txt not present yet";
  Result<KbScan> s = matcher().scan(in);
  ASSERT_TRUE(s.isOk());
  EXPECT_GT(s.value().linesRead, 0u);
  for (const KbMatch& m : s.value().matches)
    ADD_FAILURE() << m.entry->id << " matches benign line " << m.firstLine << " (and " << m.matchingLines - 1
                  << " more): " << m.firstLineText;

  // The benign match count: lines of the healthy corpus that any entry matches.
  std::ifstream again(kDataDir + "/benign_log.txt", std::ios::binary);
  std::size_t lines = 0, matched = 0;
  for (std::string line; std::getline(again, line);) {
    ++lines;
    if (!matcher().matchLine(normaliseLogLine(line)).empty()) ++matched;
  }
  std::cout << "[   KB     ] benign corpus: " << matched << " of " << lines << " lines matched an entry\n";
  RecordProperty("benign_lines", static_cast<int>(lines));
  RecordProperty("benign_matches", static_cast<int>(matched));
  EXPECT_EQ(matched, 0u);
}

// The seed documents' signatures, and the ids the seeds give them.
const std::map<std::string, std::string> kSeedIds = {
    {"RuntimeError: CUDA error: peer access is not supported between these two devices "
     "(cudaErrorPeerAccessUnsupported)",
     "cuda/peer-access-unsupported-by-hardware"},
    {"InternalError: Peer access from GPU:0 to GPU:1 is not supported by the current CUDA driver or "
     "device topology",
     "tensorflow/gpu-peer-access-error"},
};

TEST_F(KbData, SeedSignaturesReturnTheirSeedIdFirst) {
  requireEntries();
  std::ifstream in(kDataDir + "/seed_signatures.txt");
  if (!in) GTEST_SKIP() << "tests/data/seed_signatures.txt not present yet";
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    // "id<TAB>signature", or a bare signature whose id is the seed's (or the entry's with
    // exactly this signature).
    std::string id, signature = line;
    if (auto tab = line.find('\t'); tab != std::string::npos) {
      id = line.substr(0, tab);
      signature = line.substr(tab + 1);
    } else if (auto it = kSeedIds.find(line); it != kSeedIds.end()) {
      id = it->second;
    } else {
      for (const KbEntry& e : kb().entries())
        if (e.signature == line) id = e.id;
    }
    if (id.empty()) {
      ADD_FAILURE() << "seed_signatures.txt: no id known for \"" << line << "\"";
      continue;
    }
    KbScan s = matcher().scanText(signature);
    EXPECT_TRUE(!s.matches.empty() && s.matches[0].entry->id == id)
        << "\"" << signature << "\" should give " << id << " first; ranked: " << joinRanked(s);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST_F(KbData, EveryWorkaroundHasSomethingToRun) {
  requireEntries();
  for (const KbEntry& e : kb().entries())
    EXPECT_FALSE(firstWorkaround(e).empty()) << e.id << " has no workaround for doctor to print";
}

// Phrases that belong to how an entry was written, not to the failure a user is reading about:
// the "seed" documents entries were first drawn from, and a condition worded as a clause that
// explain prints after its own "when: " label ("when: When the hardware can be changed").
std::string authoringJargonIn(const std::string& rendered) {
  std::string lower = rendered;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* phrase : {"seed entry", "seed document", "seed signature", "see platform entries", "when: when ",
                             "when: if ", "when: only when ", "when: only if "})
    if (lower.find(phrase) != std::string::npos) return phrase;
  return {};
}

std::string renderedEntry(const KbEntry& e) {
  KbScan scan;
  scan.matches.push_back(KbMatch{&e, 1, e.signature, 1, {}});
  return renderKbScanText(scan, 0);
}

TEST_F(KbData, JargonCheckCatchesAPlantedEntry) {
  KbEntry e;
  e.id = "cuda/planted";
  e.rootCause = "A cause.";
  e.workarounds.push_back(
      KbWorkaround{"Use another GPU", "nvidia-smi -L", 0.5, "When the hardware can be changed", {}});
  EXPECT_EQ(authoringJargonIn(renderedEntry(e)), "when: when ");
  e.workarounds[0].condition = "The hardware can be changed";
  EXPECT_EQ(authoringJargonIn(renderedEntry(e)), "");
  e.deadEnds.push_back(KbDeadEnd{"Retry (the seed entry also sets X=1)", "It does not help.", 0.9, "", {}});
  EXPECT_EQ(authoringJargonIn(renderedEntry(e)), "seed entry");
}

TEST_F(KbData, RenderedTextHasNoAuthoringJargon) {
  requireEntries();
  for (const KbEntry& e : kb().entries()) {
    std::string found = authoringJargonIn(renderedEntry(e));
    EXPECT_TRUE(found.empty()) << e.id << ": explain would show \"" << found << "\"";
  }
}

}  // namespace
}  // namespace gpupeer
