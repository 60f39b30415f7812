#include "core/terminal_text.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>

namespace gpupeer {
namespace {

// The length of the well-formed UTF-8 sequence at text[i] (Unicode's table 3-7: no overlong
// form, no surrogate, nothing past U+10FFFF), 0 where there is none; `code` gets its value.
std::size_t utf8Sequence(std::string_view text, std::size_t i, std::uint32_t& code) {
  auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = at(i);
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the range of the byte after the lead
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, code = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, code = lead & 0x0f;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, code = lead & 0x07;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const unsigned char c = at(i + k);
    if (c < (k == 1 ? low : 0x80) || c > (k == 1 ? high : 0xbf)) return 0;
    code = (code << 6) | (c & 0x3f);
  }
  return length;
}

}  // namespace

std::string terminalSafe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
        out += fmt::format("\\x{:02x}", c);
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    std::uint32_t code = 0;
    const std::size_t length = utf8Sequence(text, i, code);
    if (length == 0) {
      out += fmt::format("\\x{:02x}", c);  // not UTF-8: shown byte by byte
      ++i;
    } else if (code <= 0x9f) {
      out += fmt::format("\\u{:04x}", code);  // a C1 control
      i += length;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

}  // namespace gpupeer
