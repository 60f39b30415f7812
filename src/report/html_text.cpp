// Escaping for HTML.
#include <fmt/format.h>

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

}  // namespace gpupeer
