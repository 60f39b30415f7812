#include "cli_output.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "command_registry.hpp"

namespace gpupeer::cli {

namespace {

// The errno of the first write to standard output that failed. Kept here because stdio forgets
// it: a large write fails past the buffer, and the final flush then has nothing left to fail on.
int firstStdoutError = 0;

}  // namespace

void noteStdoutError(int error) {
  if (firstStdoutError == 0) firstStdoutError = error != 0 ? error : EIO;
}

void printTerminal(std::string_view text) {
  std::string safe = terminalSafe(text);
  errno = 0;
  if (std::fwrite(safe.data(), 1, safe.size(), stdout) != safe.size()) noteStdoutError(errno);
}

void endQuietlyOnBrokenPipe() { std::signal(SIGPIPE, SIG_DFL); }

namespace {

// A write into a pipe nobody reads returned EPIPE instead of raising SIGPIPE: the signal was
// blocked when gpupeer started (a mask is inherited through exec). Unblocked, the pending
// signal ends the process as it would have at the write.
[[noreturn]] void dieOfBrokenPipe() {
  std::signal(SIGPIPE, SIG_DFL);
  sigset_t pipeOnly;
  sigemptyset(&pipeOnly);
  sigaddset(&pipeOnly, SIGPIPE);
  std::raise(SIGPIPE);  // pending while blocked
  sigprocmask(SIG_UNBLOCK, &pipeOnly, nullptr);
  _exit(128 + SIGPIPE);  // not reached; the status a shell shows for the signal
}

}  // namespace

int finishOutput(int exitCode) {
  errno = 0;
  if (std::fflush(stdout) != 0) noteStdoutError(errno);
  if (std::ferror(stdout)) noteStdoutError(0);  // failed in a way nobody noted: said as EIO
  if (firstStdoutError == 0) return exitCode;
  if (firstStdoutError == EPIPE) dieOfBrokenPipe();
  std::fprintf(stderr, "gpupeer: error: cannot write standard output: %s\n", std::strerror(firstStdoutError));
  return kExitError;
}

}  // namespace gpupeer::cli
