"""Text for a terminal: untrusted strings (a file name, a snapshot's host name, a log line) with
their control characters made visible, as the binary shows them (src/core/terminal_text.cpp),
so that they cannot move the cursor, retitle the window or hide text."""

import re

# C0 but newline and tab, DEL, the C1 controls U+0080..U+009F, and surrogates: U+DC80..U+DCFF
# carry bytes that were not UTF-8 (surrogateescape), the others cannot be written at all.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _shown(match):
    c = ord(match.group())
    if c < 0x80:
        return "\\x%02x" % c
    if 0xDC80 <= c <= 0xDCFF:  # a byte that was not UTF-8
        return "\\x%02x" % (c - 0xDC00)
    return "\\u%04x" % c


def terminal_safe(text):
    """`text` with every control character but newline and tab written as \\xNN (C0, DEL, a
    byte that was not UTF-8) or \\u00NN (C1): the binary's terminalSafe, character for
    character."""
    return _CONTROL.sub(_shown, text)
