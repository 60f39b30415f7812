#include "nccl_api/debug_log.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/terminal_text.hpp"

namespace gpupeer::nccl_api {

LogLevel logLevel() {
  static const LogLevel level = [] {
    const char* text = std::getenv("GPUPEER_NCCL_DEBUG");
    return text == nullptr ? LogLevel::kWarn : parseLogLevel(text);
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
  std::string line = fmt::format("{}:{}:{} gpupeer-nccl {} {}\n", host, getpid(),
                                 static_cast<long>(syscall(SYS_gettid)), level, terminalSafe(text));
  (void)!write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace gpupeer::nccl_api
