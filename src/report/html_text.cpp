// Escaping for HTML and the atomic file write the report is saved with.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "gpupeer/report.hpp"

namespace gpupeer {

std::string htmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      // Control characters other than tab and newline are not valid in HTML text; a
      // snapshot may carry them in a hostname or a kernel command line.
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t')
          out += fmt::format("&#x{:x};", 0x2400 + static_cast<unsigned char>(c));  // the control picture
        else
          out += c;
    }
  }
  return out;
}

Status writeFileAtomically(const std::string& path, std::string_view content) {
  // The temporary sits beside the target so the rename stays on one file system.
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("cannot create {}: {}", tmp, std::strerror(errno)));
  bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  ok = std::fflush(f) == 0 && ok;
  int saved = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    std::remove(tmp.c_str());
    return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("cannot write {}: {}", tmp, std::strerror(saved)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    saved = errno;
    std::remove(tmp.c_str());
    return GPUPEER_ERROR(ErrorCode::kSystem,
                         fmt::format("cannot rename {} to {}: {}", tmp, path, std::strerror(saved)));
  }
  return Status::ok();
}

}  // namespace gpupeer
