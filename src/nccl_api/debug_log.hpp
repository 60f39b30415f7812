#pragma once
// Lines in NCCL_DEBUG's shape ("host:pid:tid gpupeer-nccl INFO ...") on stderr, at the level
// GPUPEER_NCCL_DEBUG names: NONE, WARN (the default: only what the user must know), INFO (how
// each communicator started and, once per kind of call, where it went and why), TRACE (every
// call).

#include <fmt/format.h>

#include <string>

namespace gpupeer::nccl_api {

enum class LogLevel { kNone, kWarn, kInfo, kTrace };

/// The level GPUPEER_NCCL_DEBUG asks for (read once).
LogLevel logLevel();
void writeLogLine(const char* level, const std::string& text);

template <typename... Args>
void logWarn(fmt::format_string<Args...> format, Args&&... args) {
  if (logLevel() >= LogLevel::kWarn) writeLogLine("WARN", fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void logInfo(fmt::format_string<Args...> format, Args&&... args) {
  if (logLevel() >= LogLevel::kInfo) writeLogLine("INFO", fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void logTrace(fmt::format_string<Args...> format, Args&&... args) {
  if (logLevel() >= LogLevel::kTrace) writeLogLine("TRACE", fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace gpupeer::nccl_api
