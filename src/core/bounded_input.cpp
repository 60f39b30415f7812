#include "core/bounded_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <vector>

namespace gpupeer {

Result<std::string> readFileBounded(const std::string& path, std::size_t maxBytes, std::string_view what) {
  // Opened without blocking: a FIFO nobody writes would otherwise hold the open forever.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return GPUPEER_ERROR(ErrorCode::kNotFound,
                         fmt::format("cannot open {} '{}': {}", what, path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
    ::close(fd);
    // A pipe may never end, nor even start: its writer decides. Refused rather than waited on.
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("{} '{}' is a FIFO or socket, not a file; refused (save what it carries to a "
                                     "file and give that)",
                                     what, path));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // a device (/dev/zero) is read as a file
  std::string text;
  char buffer[64 * 1024];
  int error = 0;
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > maxBytes) {
      ::close(fd);
      return GPUPEER_ERROR(
          ErrorCode::kInvalidArgument,
          fmt::format("{} '{}' is larger than {} MiB (or never ends); refused", what, path, maxBytes >> 20));
    }
  }
  ::close(fd);
  if (error != 0)
    return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("cannot read {} '{}': {}", what, path, std::strerror(error)));
  return text;
}

namespace {

// Calls visit(c, i) for every character of `text` outside JSON strings (the quotes and the
// strings' contents are skipped, escapes included) until visit returns false; one pass, so
// both scans below are linear in the text.
template <class Visit>
void forEachStructuralChar(std::string_view text, Visit visit) {
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
    } else if (!visit(c, i)) {
      return;
    }
  }
}

}  // namespace

int jsonNestingDepth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  forEachStructuralChar(text, [&](char c, std::size_t) {
    if (c == '[' || c == '{') {
      if (++depth > deepest && (deepest = depth) > limit) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
    return true;
  });
  return deepest;
}

std::size_t jsonKeyPastLimit(std::string_view text, std::size_t limit) {
  constexpr std::size_t kArray = std::numeric_limits<std::size_t>::max();
  // Brackets past this depth are counted, not kept: a document nested that deep is refused by
  // its depth (kMaxJsonDepth), and a stack of every bracket of "[[[[..." would grow with the
  // input. Keys inside them are not counted.
  constexpr std::size_t kKeptDepth = 4 * static_cast<std::size_t>(kMaxJsonDepth);
  std::vector<std::size_t> keys;  // per open bracket: keys so far, or kArray
  std::size_t untracked = 0;      // open brackets deeper than kKeptDepth
  std::size_t past = std::string_view::npos;
  forEachStructuralChar(text, [&](char c, std::size_t i) {
    if (c == '{' || c == '[') {
      if (keys.size() < kKeptDepth)
        keys.push_back(c == '{' ? 0 : kArray);
      else
        ++untracked;
    } else if (c == '}' || c == ']') {
      if (untracked > 0)
        --untracked;
      else if (!keys.empty())
        keys.pop_back();
    } else if (c == ':' && untracked == 0 && !keys.empty() && keys.back() != kArray && ++keys.back() > limit) {
      past = i;
      return false;
    }
    return true;
  });
  return past;
}

std::string jsonTooManyKeysMessage(std::string_view text, std::string_view sourceName, std::size_t offset) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) line += text[i] == '\n';
  return fmt::format("{}:{}: a JSON object with more than {} keys; refused", sourceName, line, kMaxJsonObjectKeys);
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
