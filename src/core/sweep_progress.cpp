#include "core/sweep_progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

namespace gpupeer {

std::string sweepProgressLine(const std::string& what, const std::string& step, std::size_t done, std::size_t steps,
                              double seconds) {
  return fmt::format("{}: {} done ({} of {}), {:.1f} s\n", what, step, done, steps, seconds);
}

bool showSweepProgress(bool asked, std::FILE* stream) {
  return stream != nullptr && (asked || isatty(fileno(stream)) == 1);
}

SweepProgress::SweepProgress(std::string what, std::size_t steps, bool asked, std::FILE* stream)
    : what_(std::move(what)), steps_(steps), show_(showSweepProgress(asked, stream)), stream_(stream) {}

void SweepProgress::done(const std::string& step) {
  ++done_;
  if (!show_) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fputs(sweepProgressLine(what_, step, done_, steps_, seconds).c_str(), stream_);
  std::fflush(stream_);
}

}  // namespace gpupeer
