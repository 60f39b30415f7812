#pragma once
// The two ways a file descriptor reaches another process, as multi-process GPU code uses them
// for cuMem (VMM) handles: over a Unix socket (SCM_RIGHTS), and taken from the owner with
// pidfd_getfd, which Yama's ptrace scope governs. Host code only; internal.

#include <sys/types.h>

#include <cstddef>
#include <string>

#include "gpupeer/status.hpp"

namespace gpupeer::fdpass {

/// Sends `bytes` of `data` over the connected Unix socket `sock`, with `fd` attached
/// (SCM_RIGHTS) when it is >= 0.
Status sendWithFd(int sock, const void* data, std::size_t bytes, int fd);

/// Receives exactly `bytes` into `data` from `sock`, waiting at most `timeoutMs`; `*fd` gets the
/// attached descriptor or -1.
Status receiveWithFd(int sock, void* data, std::size_t bytes, int* fd, int timeoutMs);

/// A descriptor taken from another process, or the errno of the call that failed.
struct TakenFd {
  int fd = -1;
  int err = 0;       ///< EPERM: the ptrace scope or missing CAP_SYS_PTRACE; ENOSYS: kernel before 5.6
  const char* call;  ///< "pidfd_open" or "pidfd_getfd"
};

/// Takes a duplicate of descriptor `fd` of process `pid` with pidfd_open and pidfd_getfd, as
/// NCCL's cuMem import does.
TakenFd takeFdFrom(pid_t pid, int fd);

/// Why pidfd_getfd failed with `err`, for people, given Yama's scope (-1: unknown).
std::string whyTakeFdFailed(int err, int ptraceScope);

}  // namespace gpupeer::fdpass
