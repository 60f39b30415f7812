#include "core/bounded_input.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace gpupeer {

Result<std::string> readFileBounded(const std::string& path, std::size_t maxBytes, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return GPUPEER_ERROR(ErrorCode::kNotFound,
                         fmt::format("cannot open {} '{}': {}", what, path, std::strerror(errno)));
  std::string text;
  char buffer[64 * 1024];
  while (in) {
    in.read(buffer, sizeof buffer);
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > maxBytes)
      return GPUPEER_ERROR(
          ErrorCode::kInvalidArgument,
          fmt::format("{} '{}' is larger than {} MiB (or never ends); refused", what, path, maxBytes >> 20));
  }
  if (in.bad()) return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("cannot read {} '{}'", what, path));
  return text;
}

int jsonNestingDepth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool inString = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;  // the escaped character, whatever it is
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

std::string jsonSyntaxMessage(std::string_view text, std::string_view sourceName, std::size_t errorByte,
                              const std::string& what) {
  // The byte offset as line and column, which editors understand.
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i + 1 < errorByte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  std::string reason = what;
  if (auto pos = reason.find("syntax error"); pos != std::string::npos) reason = reason.substr(pos);
  return fmt::format("{}:{}:{}: not valid JSON (truncated or damaged?): {}", sourceName, line, column, reason);
}

}  // namespace gpupeer
