#pragma once
// Text for a terminal: untrusted strings (a file name, a snapshot's host name or GPU-less
// reason, an environment value, a KB path, a log line) with their control characters made
// visible, so that they cannot move the cursor, retitle the window or hide text. Every place
// that prints such text for people goes through it; python/gpupeer/_terminal.py is its twin.
// Internal.

#include <string>
#include <string_view>

namespace gpupeer {

/// `text` with every control character but newline and tab written out: C0 and DEL as \xNN,
/// the C1 controls U+0080..U+009F (in UTF-8) as \u00NN, and every byte that is not part of
/// well-formed UTF-8 (a lone 0x9b, which some terminals obey as CSI) as \xNN. Everything else,
/// UTF-8 included, is kept as it is. Linear in the size of `text`.
std::string terminalSafe(std::string_view text);

}  // namespace gpupeer
