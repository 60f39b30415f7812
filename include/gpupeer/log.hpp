#pragma once
/// \file log.hpp
/// Logging on stderr in the spirit of NCCL_DEBUG: GPUPEER_DEBUG=WARN|INFO|TRACE.
/// Default is WARN. Thread-safe (one write per line).

#include <fmt/format.h>

#include <string_view>

namespace gpupeer {

/// How much is logged; each level includes the ones before it.
enum class LogLevel { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

/// Parses a GPUPEER_DEBUG value (case-insensitive); unknown text gives kWarn.
LogLevel parseLogLevel(std::string_view text);
/// The level in force, read once from GPUPEER_DEBUG; setLogLevel overrides it (CLI -v).
LogLevel logLevel();
/// Sets the level for the whole process (any thread; later log calls see it).
void setLogLevel(LogLevel level);
/// Writes one line "gpupeer WARN file:line message" on stderr in one write; any thread. Use the
/// GPUPEER_WARN / GPUPEER_INFO / GPUPEER_TRACE macros, which skip formatting below the level.
void logLine(LogLevel level, const char* file, int line, std::string_view message);

}  // namespace gpupeer

/// Formats (fmt syntax) and logs at `level` when the level is on.
#define GPUPEER_LOG(level, ...)                                                                                        \
  do {                                                                                                                 \
    if (::gpupeer::logLevel() >= (level)) ::gpupeer::logLine((level), __FILE__, __LINE__, ::fmt::format(__VA_ARGS__)); \
  } while (0)
#define GPUPEER_WARN(...) GPUPEER_LOG(::gpupeer::LogLevel::kWarn, __VA_ARGS__)
#define GPUPEER_INFO(...) GPUPEER_LOG(::gpupeer::LogLevel::kInfo, __VA_ARGS__)
#define GPUPEER_TRACE(...) GPUPEER_LOG(::gpupeer::LogLevel::kTrace, __VA_ARGS__)
