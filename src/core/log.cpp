#include "gpupeer/log.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/terminal_text.hpp"

namespace gpupeer {
namespace {

std::atomic<int> gLevel{-1};  // -1: not read from the environment yet

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::kWarn: return "WARN";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kTrace: return "TRACE";
    case LogLevel::kNone: break;
  }
  return "NONE";
}

}  // namespace

LogLevel parseLogLevel(std::string_view text) {
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "NONE" || upper == "OFF") return LogLevel::kNone;
  if (upper == "INFO") return LogLevel::kInfo;
  if (upper == "TRACE") return LogLevel::kTrace;
  return LogLevel::kWarn;
}

LogLevel logLevel() {
  int level = gLevel.load(std::memory_order_relaxed);
  if (level < 0) {
    const char* env = std::getenv("GPUPEER_DEBUG");
    level = static_cast<int>(env ? parseLogLevel(env) : LogLevel::kWarn);
    gLevel.store(level, std::memory_order_relaxed);
  }
  return static_cast<LogLevel>(level);
}

void setLogLevel(LogLevel level) { gLevel.store(static_cast<int>(level)); }

void logLine(LogLevel level, const char* file, int line, std::string_view message) {
  const char* base = std::strrchr(file, '/');
  // Messages carry file names, environment values and log text: shown, never obeyed.
  std::string text =
      fmt::format("gpupeer {} {}:{} {}\n", levelName(level), base ? base + 1 : file, line, terminalSafe(message));
  // One write() per line so lines from several threads do not interleave.
  ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

}  // namespace gpupeer
