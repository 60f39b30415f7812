#pragma once
// Progress of a long sweep (`bench`, `coll`) on standard error: one line per finished step, where
// standard error is a terminal or the user asked (--progress), so that a sweep of minutes says
// how far it is. Never on standard output, which holds the table or the JSON. Internal.
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace gpupeer {

/// "gpupeer coll all_reduce: 8 KiB done (3 of 15), 1.2 s": what runs, the step just finished,
/// its place among `steps` and the seconds since the sweep began.
std::string sweepProgressLine(const std::string& what, const std::string& step, std::size_t done, std::size_t steps,
                              double seconds);

/// Whether progress lines are written to `stream`: where asked, or where it is a terminal; never
/// to a null stream (a process whose lines another one writes).
bool showSweepProgress(bool asked, std::FILE* stream);

/// Writes one sweepProgressLine per finished step to `stream` (default standard error) where
/// showSweepProgress says so, else nothing; `stream` may be null. Not thread-safe; one per sweep.
class SweepProgress {
 public:
  SweepProgress(std::string what, std::size_t steps, bool asked, std::FILE* stream = stderr);
  /// After each step; `step` names it ("8 KiB", "ce_write").
  void done(const std::string& step);

 private:
  std::string what_;
  std::size_t steps_;
  std::size_t done_ = 0;
  bool show_;
  std::FILE* stream_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace gpupeer
