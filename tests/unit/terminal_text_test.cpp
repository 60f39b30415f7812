// terminalSafe: what reaches a terminal from untrusted text. Its Python twin
// (python/gpupeer/_terminal.py) is held to the same cases in python/tests.
#include "core/terminal_text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpupeer {
namespace {

TEST(TerminalSafe, C0ControlsAndDeleteAreShownButNewlineAndTabKept) {
  EXPECT_EQ(terminalSafe("a\x1b[2J\x07\x7f\tb\n"), "a\\x1b[2J\\x07\\x7f\tb\n");
  EXPECT_EQ(terminalSafe(std::string("nul\0here\r", 9)), "nul\\x00here\\x0d");
}

TEST(TerminalSafe, C1ControlsInUtf8AreShownAsCodePoints) {
  EXPECT_EQ(terminalSafe("\xc2\x9b"
                         "31m \xc2\x85 \xc2\x80"),
            "\\u009b31m \\u0085 \\u0080");
}

TEST(TerminalSafe, BytesThatAreNotUtf8AreShownOneByOne) {
  // A lone 0x9b is CSI to a terminal in 8-bit mode; a cut sequence, an overlong form and an
  // encoded surrogate are no UTF-8 either.
  EXPECT_EQ(terminalSafe("\x9b"
                         "31m"),
            "\\x9b31m");
  EXPECT_EQ(terminalSafe("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(terminalSafe("\xe2\x82"
                         "a"),
            "\\xe2\\x82a");
  EXPECT_EQ(terminalSafe("\xc0\x9b"), "\\xc0\\x9b");
  EXPECT_EQ(terminalSafe("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(terminalSafe("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(terminalSafe("\xc2"), "\\xc2");
}

TEST(TerminalSafe, PrintableTextAndUtf8AreKeptAsTheyAre) {
  const std::string text = "GPU0 H100 \xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80 \xc2\xa0 100%";
  EXPECT_EQ(terminalSafe(text), text);
  EXPECT_EQ(terminalSafe(""), "");
}

}  // namespace
}  // namespace gpupeer
