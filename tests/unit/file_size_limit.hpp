#pragma once
// A full disk, made on demand: RLIMIT_FSIZE makes every write past the limit fail with EFBIG
// (SIGXFSZ ignored, so the write returns instead of killing the writer). Processes started while
// it is in force inherit it, so a CLI run sees the same full disk.

#include <sys/resource.h>

#include <csignal>
#include <cstddef>

namespace gpupeer::testing {

class FileSizeLimit {
 public:
  explicit FileSizeLimit(std::size_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    savedSignal_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, savedSignal_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  void (*savedSignal_)(int) = SIG_DFL;
};

}  // namespace gpupeer::testing
