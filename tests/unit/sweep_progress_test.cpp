// The progress lines of long sweeps: their text, and that they appear only where asked for or
// where standard error is a terminal.
#include "core/sweep_progress.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace gpupeer {
namespace {

std::string written(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  return text;
}

TEST(SweepProgress, LineNamesTheStepItsPlaceAndTheTime) {
  EXPECT_EQ(sweepProgressLine("gpupeer coll all_reduce", "8 KiB", 3, 15, 1.25),
            "gpupeer coll all_reduce: 8 KiB done (3 of 15), 1.2 s\n");
  EXPECT_EQ(sweepProgressLine("gpupeer bench", "ce_write", 1, 1, 62.0),
            "gpupeer bench: ce_write done (1 of 1), 62.0 s\n");
}

TEST(SweepProgress, WrittenWhereAskedOneLinePerStep) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  SweepProgress progress("gpupeer coll broadcast", 2, /*asked=*/true, f);
  progress.done("8 B");
  progress.done("32 B");
  const std::string text = written(f);
  EXPECT_EQ(text.rfind("gpupeer coll broadcast: 8 B done (1 of 2), ", 0), 0u) << text;
  EXPECT_NE(text.find("\ngpupeer coll broadcast: 32 B done (2 of 2), "), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  std::fclose(f);
}

TEST(SweepProgress, SilentWhereNotAskedAndNotATerminal) {
  std::FILE* f = std::tmpfile();  // a file is no terminal
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(showSweepProgress(false, f));
  EXPECT_TRUE(showSweepProgress(true, f));
  EXPECT_FALSE(showSweepProgress(true, nullptr));
  SweepProgress progress("gpupeer bench", 1, /*asked=*/false, f);
  progress.done("ce_write");
  EXPECT_EQ(written(f), "");
  std::fclose(f);
}

}  // namespace
}  // namespace gpupeer
