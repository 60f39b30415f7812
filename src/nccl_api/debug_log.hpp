#pragma once
// Lines in NCCL_DEBUG's shape ("host:pid:tid gpupeer-nccl INFO ...") on stderr, at the level
// GPUPEER_NCCL_DEBUG names: NONE, WARN (the default: only what the user must know), INFO (how
// each communicator started and, once per kind of call, where it went and why), TRACE (every
// call).

#include <fmt/format.h>

#include <string>

#include "gpupeer/log.hpp"

namespace gpupeer::nccl_api {

using gpupeer::LogLevel;

/// The level GPUPEER_NCCL_DEBUG asks for (read once; parsed as GPUPEER_DEBUG is), independent
/// of the library's own GPUPEER_DEBUG level.
LogLevel logLevel();
/// One line on stderr in one write; the text terminal-safe (it may hold the environment's).
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
