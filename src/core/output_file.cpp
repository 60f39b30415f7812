#include "core/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace gpupeer {
namespace {

Status cannotWrite(const std::string& path, int error) {
  return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("cannot write '{}': {}", path, std::strerror(error)));
}

// Every byte of `content` to `fd`: 0, or the errno of the write that failed.
int writeAll(int fd, std::string_view content) {
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// A FIFO, a device or a terminal is written where it is, as `>` does: replacing /dev/null by a
// regular file would break it for every program on the machine. `flags` adds O_CREAT for a
// symbolic link to nothing, which `>` creates the file for.
Status writeInPlace(const std::string& path, std::string_view content, int flags) {
  int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | flags, 0666);
  if (fd < 0) return cannotWrite(path, errno);
  int error = writeAll(fd, content);
  if (::close(fd) != 0 && error == 0) error = errno;
  return error == 0 ? Status::ok() : cannotWrite(path, error);
}

// A new file in `path`'s folder, named so that no two writers (threads or processes) pick the
// same one and so that a long file name does not make it too long. Created as `>` creates a
// file (0666 less the umask). -1 with errno set when the folder does not allow it.
int createTemporaryBeside(const std::string& path, std::string& temp) {
  static std::atomic<unsigned> counter{0};
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = fmt::format(".gpupeer-{}-{}.tmp", ::getpid(), counter.fetch_add(1));
    temp = folder.empty() ? name : (folder / name).string();
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;  // errno is EEXIST: a hundred stale temporary files of this pid
}

// The regular file `file` (`path` in messages: the name the user gave, which may be a link to
// it), through a temporary file and a rename. `old` is the file it replaces, or null for a new one.
Status replaceWhole(const std::string& file, const std::string& path, std::string_view content,
                    const struct stat* old) {
  std::string temp;
  int fd = createTemporaryBeside(file, temp);
  if (fd < 0) {
    if (old == nullptr) return cannotWrite(path, errno);
    return GPUPEER_ERROR(ErrorCode::kSystem,
                         fmt::format("cannot write '{}': no temporary file can be made in its folder to replace it "
                                     "whole: {}",
                                     path, std::strerror(errno)));
  }
  int error = writeAll(fd, content);
  if (error == 0 && old != nullptr) {
    // The owner first: changing it clears set-user-ID bits that the mode then puts back. Only
    // root (or an owner who is in the group) may; anyone else gets a file of their own, as
    // `cp` gives them.
    (void)::fchown(fd, old->st_uid, old->st_gid);
    if (::fchmod(fd, old->st_mode & 07777) != 0) error = errno;
  }
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temp.c_str(), file.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    return cannotWrite(path, error);
  }
  return Status::ok();
}

}  // namespace

Status writeOutputFile(const std::string& path, std::string_view content) {
  if (path.empty()) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "the output file name is empty");
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0) {
    if (errno != ENOENT) return cannotWrite(path, errno);  // a folder on the way not searchable, a loop
    struct stat link {};
    if (::lstat(path.c_str(), &link) == 0) return writeInPlace(path, content, O_CREAT);  // a link to nothing
    return replaceWhole(path, path, content, nullptr);
  }
  if (S_ISDIR(target.st_mode))
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("cannot write '{}': it is a folder; give a file name", path));
  if (!S_ISREG(target.st_mode)) return writeInPlace(path, content, 0);
  // Replace the file a symbolic link names, not the link.
  std::string file = path;
  if (char* real = ::realpath(path.c_str(), nullptr)) {
    file = real;
    std::free(real);
  }
  // Refused where `>` would be: opening it for writing asks the kernel the same question `>`
  // asks (permissions as they are for this user, a read-only file system, an immutable file).
  int probe = ::open(file.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  if (probe < 0) return cannotWrite(path, errno);
  ::close(probe);
  return replaceWhole(file, path, content, &target);
}

}  // namespace gpupeer
