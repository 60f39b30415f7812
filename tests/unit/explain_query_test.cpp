// explain of a one-line query against the built-in KB (kb/): a KB id, or an error name or
// number of each code family, finds the entry that carries it, specific causes above wrappers.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>

#include "cli_support.hpp"
#include "gpupeer/explain.hpp"

namespace gpupeer {
namespace {

const std::string kKbDir = GPUPEER_SOURCE_KB_DIR;
const std::string kDataDir = GPUPEER_TEST_DATA_DIR;

class ExplainQuery : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::vector<std::string> warnings;
    Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({kKbDir}, &warnings);
    kb_ = std::make_unique<KnowledgeBase>(kb.isOk() ? std::move(kb).value() : KnowledgeBase{});
  }
  static void TearDownTestSuite() { kb_.reset(); }

  static Explanation explain(const std::string& text) {
    Result<Explanation> e = explainText(*kb_, text);
    if (!e.isOk()) throw std::runtime_error(e.status().toString());
    return std::move(e).value();
  }
  static std::vector<std::string> ids(const Explanation& e) {
    std::vector<std::string> out;
    for (const KbMatch& m : e.scan.matches) out.push_back(m.entry->id);
    return out;
  }
  static bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  }

  static inline std::unique_ptr<KnowledgeBase> kb_;
};

TEST_F(ExplainQuery, CudaNameAndNumberFindThePeerAccessEntryFirst) {
  for (const char* query : {"cudaErrorPeerAccessUnsupported", "CUDA error 217", "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"}) {
    Explanation e = explain(query);
    std::vector<std::string> found = ids(e);
    ASSERT_FALSE(found.empty()) << query;
    // The entry gpupeer's own cudaErrorPeerAccessUnsupported errors cite comes first; the
    // other entries that carry 217 follow.
    EXPECT_EQ(found.front(), "cuda/peer-access-unsupported-by-hardware") << query;
    EXPECT_TRUE(has(found, "nccl/ipc-open-217")) << query;
    EXPECT_NE(e.scan.matches.front().matchedBy.find("cudaError_t 217"), std::string::npos) << query;
    ASSERT_EQ(e.codes.size(), 1u) << query;
    EXPECT_EQ(e.codes[0].number, 217) << query;
  }
}

TEST_F(ExplainQuery, NcclNameAndNumberRankTheCauseAboveTheWrapper) {
  for (const char* query : {"ncclSystemError", "NCCL error 2"}) {
    std::vector<std::string> found = ids(explain(query));
    ASSERT_TRUE(has(found, "nccl/unhandled-system-error")) << query;
    EXPECT_EQ(found.front(), "nccl/devshm-exhausted") << query;       // a cause, of NCCL's own domain
    EXPECT_EQ(found.back(), "nccl/unhandled-system-error") << query;  // the generic wrapper
    EXPECT_TRUE(has(found, "platform/wsl2-unsupported")) << query;
  }
}

TEST_F(ExplainQuery, NvmlNameAndNumberFindTheEntryThatCarriesThem) {
  for (const char* query : {"NVML_ERROR_LIB_RM_VERSION_MISMATCH", "nvmlReturn_t 18"}) {
    std::vector<std::string> found = ids(explain(query));
    ASSERT_FALSE(found.empty()) << query;
    EXPECT_EQ(found.front(), "driver/nvml-driver-mismatch") << query;
  }
  // A code no entry carries is still read, and nothing is claimed to match.
  Explanation none = explain("NVML_ERROR_NO_PERMISSION");
  ASSERT_EQ(none.codes.size(), 1u);
  EXPECT_EQ(none.codes[0].number, 4);
  EXPECT_FALSE(none.found());
  EXPECT_NE(renderExplanationText(none, 5).find("NVML_ERROR_NO_PERMISSION (nvmlReturn_t 4)"), std::string::npos);
}

TEST_F(ExplainQuery, KbIdFindsItsEntry) {
  Explanation e = explain("driver/cuda-driver-too-old");
  ASSERT_EQ(ids(e), std::vector<std::string>{"driver/cuda-driver-too-old"});
  EXPECT_EQ(e.scan.matches[0].matchedBy, "its id");
  EXPECT_TRUE(ids(explain("driver/no-such-entry")).empty());
}

TEST_F(ExplainQuery, BareNumberListsEachFamilysReading) {
  Explanation e = explain("2");
  ASSERT_EQ(e.codes.size(), 3u);
  std::vector<std::string> found = ids(e);
  EXPECT_TRUE(has(found, "nccl/p2p-buffer-oom"));    // cudaErrorMemoryAllocation (2)
  EXPECT_TRUE(has(found, "nccl/devshm-exhausted"));  // ncclSystemError (2)
  std::string text = renderExplanationText(e, 0);
  EXPECT_NE(text.find("cudaErrorMemoryAllocation (cudaError_t 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("NVML_ERROR_INVALID_ARGUMENT (nvmlReturn_t 2)"), std::string::npos) << text;
}

TEST_F(ExplainQuery, NumbersInsideLogsAreNotCodes) {
  Explanation e = explain("step 217 done\n217\nloss 2.0");
  EXPECT_TRUE(e.codes.empty());
  EXPECT_TRUE(e.scan.matches.empty());
  std::ifstream in(kDataDir + "/benign_log.txt", std::ios::binary);
  ASSERT_TRUE(in);
  Result<Explanation> benign = explainStream(*kb_, in);
  ASSERT_TRUE(benign.isOk());
  EXPECT_TRUE(benign.value().scan.matches.empty());
  EXPECT_TRUE(benign.value().codes.empty());
}

TEST(ExplainQueryCli, BareErrorNameExitsZeroAndSaysWhatItRead) {
  testing::TempDir scratch;
  CliRun r = runCli(scratch, "explain cudaErrorPeerAccessUnsupported");
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("CUDA error: cudaErrorPeerAccessUnsupported (cudaError_t 217)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1. cuda/peer-access-unsupported-by-hardware"), std::string::npos) << r.out;
  CliRun json = runCli(scratch, "explain --json 'NCCL error 2'");
  EXPECT_EQ(json.exitCode, 0) << json.err;
  EXPECT_NE(json.out.find("\"type\": \"ncclResult_t\""), std::string::npos) << json.out;
}

}  // namespace
}  // namespace gpupeer
