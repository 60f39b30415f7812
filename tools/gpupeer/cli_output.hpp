#pragma once
// How the CLI writes: text for a terminal with the control characters of untrusted strings
// (a snapshot's host name, a KB entry, a log line) made visible, a standard output that fails (a full disk, a closed
// descriptor) reported, and a reader that stops early (`gpupeer explain x | head -1`) ending gpupeer quietly.
#include <string>
#include <string_view>

#include "core/terminal_text.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer::cli {

using gpupeer::terminalSafe;  // the one for every terminal: core/terminal_text.hpp

/// terminalSafe(text) on standard output.
void printTerminal(std::string_view text);

/// Makes a write into a pipe whose reader has gone end the process by SIGPIPE, whatever the
/// parent left the signal set to: the way git and coreutils end (a shell sees status 141), with
/// no message. Called once at start-up.
void endQuietlyOnBrokenPipe();

/// Records the errno of a write to standard output that failed (0: not known), for
/// finishOutput; only the first is kept.
void noteStdoutError(int error);

/// Flushes standard output; when that or an earlier write failed, says so once on stderr with
/// the first failure's reason and returns kExitError, else `exitCode`. A reader that went away
/// (EPIPE) ends the process by SIGPIPE instead, quietly.
int finishOutput(int exitCode);

}  // namespace gpupeer::cli
