// The catalogue of bad input (docs/bad-inputs.md), `report --results` files: read with bounded
// time and memory, and refused with a Status that names the file and the problem.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "gpupeer/report.hpp"
#include "kb_test_support.hpp"

namespace gpupeer {
namespace {

TEST(BadResultsFile, FifoIsRefusedWithoutWaitingForAWriter) {
  testing::TempDir dir;
  std::string fifo = dir.path() + "/results.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ReportResults r;
  Status loaded = loadReportResults(fifo, r);  // nobody writes it: a blocking open never returns
  EXPECT_EQ(loaded.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(loaded.message().find("'" + fifo + "' is a FIFO"), std::string::npos) << loaded.toString();
}

TEST(BadResultsFile, ThatNeverEndsIsRefusedAtTheSizeLimit) {
  ReportResults r;
  Status loaded = loadReportResults("/dev/zero", r);
  EXPECT_EQ(loaded.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(loaded.message().find("'/dev/zero' is larger than 64 MiB"), std::string::npos) << loaded.toString();
}

}  // namespace
}  // namespace gpupeer
