// `-o` of every subcommand that has one (snapshot, report) goes through the one output writer:
// a FIFO stays a FIFO, a replaced file keeps its mode, a folder or a file the user cannot write
// is refused by name, and a full disk leaves the old file as it was.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "cli_support.hpp"
#include "file_size_limit.hpp"

namespace gpupeer {
namespace {

const std::string kSnapshot = std::string(GPUPEER_TEST_DATA_DIR) + "/snapshot_hgx_h100_8gpu.json";

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Writer {
  const char* name;
  std::string args;          // everything but the output file
  const char* contentsPart;  // in what it writes
};

std::vector<Writer> writers() {
  return {{"snapshot", "snapshot --snapshot " + quote(kSnapshot) + " -o ", "\"gpupeer.snapshot\""},
          {"report", "report --snapshot " + quote(kSnapshot) + " -o ", "<html"}};
}

int entries(const std::string& folder) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(folder)) n += e.path().filename() != "stderr.txt";
  return n;
}

class OutputFileCli : public ::testing::Test {
 protected:
  testing::TempDir scratch_;
};

TEST_F(OutputFileCli, FifoIsWrittenInPlaceNotReplaced) {
  for (const Writer& w : writers()) {
    std::string fifo = scratch_.path() + "/" + w.name + ".fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
    std::string received;
    std::thread reader([&] { received = contents(fifo); });
    CliRun r = runCli(scratch_, w.args + quote(fifo));
    reader.join();
    EXPECT_EQ(r.exitCode, 0) << w.name << ": " << r.err;
    EXPECT_NE(received.find(w.contentsPart), std::string::npos) << w.name;
    struct stat st {};
    ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode)) << w.name << " replaced the FIFO by a regular file";
  }
}

TEST_F(OutputFileCli, ReplacedFileKeepsItsMode) {
  for (const Writer& w : writers()) {
    std::string out = scratch_.write(std::string(w.name) + ".out", "old contents");
    ASSERT_EQ(::chmod(out.c_str(), 0600), 0);
    CliRun r = runCli(scratch_, w.args + quote(out));
    EXPECT_EQ(r.exitCode, 0) << w.name << ": " << r.err;
    EXPECT_NE(contents(out).find(w.contentsPart), std::string::npos) << w.name;
    struct stat st {};
    ASSERT_EQ(::stat(out.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u) << w.name;
  }
}

TEST_F(OutputFileCli, FolderIsRefusedByName) {
  for (const Writer& w : writers()) {
    CliRun r = runCli(scratch_, w.args + quote(scratch_.path()));
    EXPECT_EQ(r.exitCode, 2) << w.name << ": " << r.err;
    EXPECT_NE(r.err.find("'" + scratch_.path() + "': it is a folder"), std::string::npos) << r.err;
    EXPECT_EQ(entries(scratch_.path()), 0) << w.name << " left a file behind";
  }
}

TEST_F(OutputFileCli, FullDiskLeavesTheOldFile) {
  for (const Writer& w : writers()) {
    std::string out = scratch_.write(std::string(w.name) + ".out", "old contents");
    CliRun r;
    {
      testing::FileSizeLimit full(4096);  // every output here is larger; stderr's line fits
      r = runCli(scratch_, w.args + quote(out));
    }
    EXPECT_EQ(r.exitCode, 4) << w.name << ": " << r.err;
    EXPECT_NE(r.err.find("cannot write '" + out + "': File too large"), std::string::npos) << r.err;
    EXPECT_EQ(contents(out), "old contents") << w.name;
  }
  EXPECT_EQ(entries(scratch_.path()), 2) << "a temporary file was left behind";
}

// The prefix that runs gpupeer as a user who owns nothing in scratch_: nobody where the test
// runs as root (root may write any file), else nothing. Empty with `skip` set where that cannot be.
std::string asAnotherUser(const std::string& folder, std::string& skip) {
  if (::geteuid() != 0) return "";
  if (::access("/usr/bin/setpriv", X_OK) != 0) skip = "running as root and no setpriv to run as nobody";
  EXPECT_EQ(::chmod(folder.c_str(), 0755), 0);  // nobody may look in, not write
  return "setpriv --reuid=65534 --regid=65534 --clear-groups ";
}

bool nobodyCannotRun(const CliRun& r, const std::string& out) {
  return r.err.find("Permission denied") != std::string::npos && r.err.find(out) == std::string::npos;
}

// As `>` refuses: a file the user has no write permission on.
TEST_F(OutputFileCli, OutputTheUserCannotWriteIsRefused) {
  std::string skip, prefix = asAnotherUser(scratch_.path(), skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  for (const Writer& w : writers()) {
    std::string out = scratch_.write(std::string(w.name) + ".out", "old contents");
    ASSERT_EQ(::chmod(out.c_str(), 0444), 0);
    CliRun r = runCli(scratch_, w.args + quote(out), nullptr, prefix);
    if (nobodyCannotRun(r, out)) GTEST_SKIP() << "nobody cannot run gpupeer or read the fixture here: " << r.err;
    EXPECT_EQ(r.exitCode, 4) << w.name << ": " << r.err;
    EXPECT_NE(r.err.find("cannot write '" + out + "': Permission denied"), std::string::npos) << r.err;
    EXPECT_EQ(contents(out), "old contents") << w.name;
  }
  EXPECT_EQ(entries(scratch_.path()), 2) << "a temporary file was left behind";
}

// A file anyone may write, in a folder the user may not: `>` would write it in place, but a
// failure part way would then leave half a file; refused instead, saying why.
TEST_F(OutputFileCli, FileInAFolderTheUserCannotWriteIsRefusedNotHalfWritten) {
  std::string skip, prefix = asAnotherUser(scratch_.path(), skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  for (const Writer& w : writers()) {
    std::string out = scratch_.write(std::string(w.name) + ".out", "old contents");
    ASSERT_EQ(::chmod(out.c_str(), 0666), 0);
  }
  std::string err = scratch_.write("stderr.txt", "");  // runCli's, made while the folder is writable
  ASSERT_EQ(::chmod(err.c_str(), 0666), 0);
  if (prefix.empty()) {
    ASSERT_EQ(::chmod(scratch_.path().c_str(), 0555), 0);
  }
  for (const Writer& w : writers()) {
    std::string out = scratch_.path() + "/" + w.name + ".out";
    CliRun r = runCli(scratch_, w.args + quote(out), nullptr, prefix);
    if (nobodyCannotRun(r, out)) GTEST_SKIP() << "nobody cannot run gpupeer or read the fixture here: " << r.err;
    EXPECT_EQ(r.exitCode, 4) << w.name << ": " << r.err;
    EXPECT_NE(r.err.find("cannot write '" + out + "': no temporary file can be made in its folder"), std::string::npos)
        << r.err;
    EXPECT_EQ(contents(out), "old contents") << w.name;
  }
  ::chmod(scratch_.path().c_str(), 0755);  // so that the folder can be removed
}

}  // namespace
}  // namespace gpupeer
