// The gpupeer binary with a standard output that cannot take what it writes. A reader that
// stopped early (`gpupeer explain x | head -1`) ends gpupeer quietly by SIGPIPE, as it ends git
// and coreutils, however the parent left the signal; a full or closed standard output is one
// clean "cannot write standard output" error with exit 4, never an internal error.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <vector>

#include "cli_support.hpp"

namespace gpupeer {
namespace {

const std::string kData = GPUPEER_TEST_DATA_DIR;
const std::string kEightGpus = kData + "/snapshot_hgx_h100_8gpu.json";
constexpr int kDiedOfSigpipe = 128 + SIGPIPE;  // what runWithStdout returns, as a shell would

// How the parent left SIGPIPE for the process it starts (both are inherited through exec).
enum class ParentSigpipe { kDefault, kIgnored, kBlocked };

// Runs the CLI with standard output on `fd` (-1: closed) and returns its exit code, or 128 +
// the signal that ended it; its standard error goes to `err`.
int runWithStdout(const std::string& args, int fd, std::string* err, ParentSigpipe sigpipe = ParentSigpipe::kDefault) {
  testing::TempDir scratch;
  std::string errFile = scratch.path() + "/stderr.txt";
  std::string command = "exec " + std::string(GPUPEER_CLI_PATH) + " " + args;
  pid_t pid = fork();
  if (pid == 0) {
    int e = open(errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);  // before fd 1 may be free
    dup2(e, STDERR_FILENO);
    close(e);
    if (fd >= 0)
      dup2(fd, STDOUT_FILENO);
    else
      close(STDOUT_FILENO);
    if (sigpipe == ParentSigpipe::kIgnored) std::signal(SIGPIPE, SIG_IGN);
    if (sigpipe == ParentSigpipe::kBlocked) {
      sigset_t pipeOnly;
      sigemptyset(&pipeOnly);
      sigaddset(&pipeOnly, SIGPIPE);
      sigprocmask(SIG_BLOCK, &pipeOnly, nullptr);
    }
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream in(errFile);
  err->assign((std::istreambuf_iterator<char>(in)), {});
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Every subcommand's way of writing that needs no GPU: text through printTerminal, JSON through
// fmt::print, help and version through CLI11's std::cout.
std::vector<std::string> writingCommands() {
  return {"explain x",
          "explain --top 0 --file " + kData + "/tool_outputs/nccl_info_could_not_enable_p2p.txt",
          "explain --json --file " + kData + "/tool_outputs/nccl_info_could_not_enable_p2p.txt",
          "topo --snapshot " + kEightGpus,
          "topo --json --snapshot " + kEightGpus,
          "doctor --snapshot " + kEightGpus,
          "doctor --json --snapshot " + kEightGpus,
          "snapshot --snapshot " + kEightGpus,
          "snapshot --json --snapshot " + kEightGpus,
          "--help",
          "coll --help",
          "--version"};
}

// A pipe whose reader has gone: the write end, to be closed by the caller.
int pipeNobodyReads() {
  int ends[2];
  if (pipe(ends) != 0) return -1;
  close(ends[0]);
  return ends[1];
}

TEST(StandardOutputCli, BrokenPipeEndsEverySubcommandQuietly) {
  for (ParentSigpipe parent : {ParentSigpipe::kDefault, ParentSigpipe::kIgnored, ParentSigpipe::kBlocked}) {
    for (const std::string& args : writingCommands()) {
      int fd = pipeNobodyReads();
      ASSERT_GE(fd, 0);
      std::string err;
      EXPECT_EQ(runWithStdout(args, fd, &err, parent), kDiedOfSigpipe)
          << args << " (parent's SIGPIPE " << static_cast<int>(parent) << "): " << err;
      close(fd);
      EXPECT_EQ(err, "") << args;
    }
  }
}

TEST(StandardOutputCli, FullStandardOutputIsOneCleanError) {
  for (const std::string& args : writingCommands()) {
    int full = open("/dev/full", O_WRONLY);
    ASSERT_GE(full, 0);
    std::string err;
    EXPECT_EQ(runWithStdout(args, full, &err), 4) << args;
    close(full);
    EXPECT_EQ(err, "gpupeer: error: cannot write standard output: No space left on device\n") << args;
  }
}

TEST(StandardOutputCli, ClosedStandardOutputIsOneCleanError) {
  for (const std::string& args : writingCommands()) {
    std::string err;
    EXPECT_EQ(runWithStdout(args, -1, &err), 4) << args;
    EXPECT_EQ(err, "gpupeer: error: cannot write standard output: Bad file descriptor\n") << args;
  }
}

}  // namespace
}  // namespace gpupeer
