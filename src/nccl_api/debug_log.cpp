#include "nccl_api/debug_log.hpp"

#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gpupeer::nccl_api {

LogLevel logLevel() {
  static const LogLevel level = [] {
    const char* text = std::getenv("GPUPEER_NCCL_DEBUG");
    if (text == nullptr || *text == '\0') return LogLevel::kWarn;
    if (strcasecmp(text, "NONE") == 0) return LogLevel::kNone;
    if (strcasecmp(text, "INFO") == 0) return LogLevel::kInfo;
    if (strcasecmp(text, "TRACE") == 0) return LogLevel::kTrace;
    return LogLevel::kWarn;
  }();
  return level;
}

void writeLogLine(const char* level, const std::string& text) {
  static const std::string host = [] {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    if (char* dot = std::strchr(name, '.')) *dot = '\0';
    return std::string(name);
  }();
  // One write per line, so lines of several threads and processes do not interleave.
  std::string line =
      fmt::format("{}:{}:{} gpupeer-nccl {} {}\n", host, getpid(), static_cast<long>(syscall(SYS_gettid)), level, text);
  (void)!write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace gpupeer::nccl_api
