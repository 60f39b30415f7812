// The output writer: a regular file replaced whole keeping its mode, anything else written where
// it is and never replaced, and a target refused where the shell's `>` refuses it.
#include "core/output_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "file_size_limit.hpp"
#include "kb_test_support.hpp"

namespace gpupeer {
namespace {

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct stat statOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path << ": " << std::strerror(errno);
  return st;
}

int entries(const std::string& folder) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(folder)) ++n;
  return n;
}

class OutputFile : public ::testing::Test {
 protected:
  testing::TempDir dir_;
};

TEST_F(OutputFile, RegularFileIsReplacedWholeKeepingItsMode) {
  std::string path = dir_.write("kept-mode.json", "old contents, longer than the new");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  ASSERT_TRUE(writeOutputFile(path, "new").isOk());
  EXPECT_EQ(contents(path), "new");
  EXPECT_EQ(statOf(path).st_mode & 07777, 0640u);
  EXPECT_EQ(entries(dir_.path()), 1) << "a temporary file was left behind";
}

TEST_F(OutputFile, NewFileGetsTheModeTheShellWouldGiveIt) {
  mode_t saved = ::umask(027);
  Status written = writeOutputFile(dir_.path() + "/new.json", "text");
  ::umask(saved);
  ASSERT_TRUE(written.isOk()) << written.toString();
  EXPECT_EQ(statOf(dir_.path() + "/new.json").st_mode & 07777, 0640u);
}

TEST_F(OutputFile, FifoIsWrittenInPlaceNotReplaced) {
  std::string path = dir_.path() + "/fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  std::string received;
  std::thread reader([&] { received = contents(path); });  // opening waits for the writer
  Status written = writeOutputFile(path, "through the pipe");
  reader.join();
  ASSERT_TRUE(written.isOk()) << written.toString();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(S_ISFIFO(statOf(path).st_mode)) << "the FIFO was replaced";
}

TEST_F(OutputFile, DeviceNodeIsWrittenInPlaceNotReplaced) {
  std::string path = dir_.path() + "/null";
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)  // what /dev/null is
    GTEST_SKIP() << "cannot make a device node here (needs CAP_MKNOD): " << std::strerror(errno);
  Status written = writeOutputFile(path, "into the void");
  struct stat st = statOf(path);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device node was replaced by a regular file";
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  // A file system mounted nodev refuses to open the node: then the write is refused, by name.
  if (!written.isOk()) {
    EXPECT_NE(written.message().find(path), std::string::npos) << written.toString();
  }
  EXPECT_EQ(entries(dir_.path()), 1) << "a temporary file was left behind";
}

TEST_F(OutputFile, SymbolicLinkStaysALinkToTheNewContents) {
  std::string file = dir_.write("real.json", "old");
  std::string link = dir_.path() + "/link.json";
  ASSERT_EQ(::symlink(file.c_str(), link.c_str()), 0);
  ASSERT_TRUE(writeOutputFile(link, "new").isOk());
  EXPECT_TRUE(S_ISLNK(statOf(link).st_mode));
  EXPECT_EQ(contents(file), "new");
}

TEST_F(OutputFile, FolderIsRefusedByName) {
  Status written = writeOutputFile(dir_.path(), "text");
  EXPECT_EQ(written.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(written.message().find("'" + dir_.path() + "': it is a folder"), std::string::npos) << written.toString();
  EXPECT_EQ(entries(dir_.path()), 0);
}

TEST_F(OutputFile, EmptyNameIsRefused) {
  Status written = writeOutputFile("", "text");
  EXPECT_EQ(written.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(written.message().find("empty"), std::string::npos) << written.toString();
}

TEST_F(OutputFile, MissingFolderIsNamed) {
  std::string path = dir_.path() + "/no/such/folder/r.html";
  Status written = writeOutputFile(path, "text");
  EXPECT_EQ(written.code(), ErrorCode::kSystem);
  EXPECT_NE(written.message().find("'" + path + "': No such file or directory"), std::string::npos)
      << written.toString();
}

TEST_F(OutputFile, FullDiskLeavesTheOldFileAndNoTemporary) {
  std::string path = dir_.write("old.json", "old contents");
  Status written;
  {
    testing::FileSizeLimit full(1000);
    written = writeOutputFile(path, std::string(64 * 1024, 'x'));
  }
  EXPECT_EQ(written.code(), ErrorCode::kSystem);
  EXPECT_NE(written.message().find("'" + path + "': File too large"), std::string::npos) << written.toString();
  EXPECT_EQ(contents(path), "old contents");
  EXPECT_EQ(entries(dir_.path()), 1) << "a temporary file was left behind";
}

// Root may write a file without write permission, and `>` does: so does gpupeer, as root.
// Refusal as another user: OutputFileCli.OutputTheUserCannotWriteIsRefused runs gpupeer as one.
TEST_F(OutputFile, ReadOnlyFileIsTreatedAsTheShellTreatsIt) {
  std::string path = dir_.write("read-only.json", "old contents");
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  Status written = writeOutputFile(path, "new");
  if (::geteuid() == 0) {
    ASSERT_TRUE(written.isOk()) << written.toString();
    EXPECT_EQ(contents(path), "new");
    EXPECT_EQ(statOf(path).st_mode & 07777, 0444u);
  } else {
    EXPECT_EQ(written.code(), ErrorCode::kSystem);
    EXPECT_NE(written.message().find("'" + path + "': Permission denied"), std::string::npos) << written.toString();
    EXPECT_EQ(contents(path), "old contents");
  }
  EXPECT_EQ(entries(dir_.path()), 1) << "a temporary file was left behind";
}

}  // namespace
}  // namespace gpupeer
