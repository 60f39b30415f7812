#include "core/fd_passing.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpupeer::fdpass {
namespace {

// The syscall numbers, for C libraries older than the kernel (glibc 2.36 added wrappers).
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

Status systemError(const char* call) {
  int err = errno;
  return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("{}: {}", call, std::strerror(err)))
      .withApiError(std::strerror(err), std::to_string(err));
}

}  // namespace

Status sendWithFd(int sock, const void* data, std::size_t bytes, int fd) {
  iovec iov{const_cast<void*>(data), bytes};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  // A stream socket may take the bytes in parts; the descriptor travels with the first.
  ssize_t n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
  if (n < 0) return systemError("sendmsg");
  for (std::size_t done = static_cast<std::size_t>(n); done < bytes;) {
    ssize_t more = ::send(sock, static_cast<const char*>(data) + done, bytes - done, MSG_NOSIGNAL);
    if (more < 0) return systemError("send");
    done += static_cast<std::size_t>(more);
  }
  return Status::ok();
}

Status receiveWithFd(int sock, void* data, std::size_t bytes, int* fd, int timeoutMs) {
  *fd = -1;
  std::size_t done = 0;
  while (done < bytes) {
    pollfd p{sock, POLLIN, 0};
    int ready = ::poll(&p, 1, timeoutMs);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return systemError("poll");
    if (ready == 0)
      return GPUPEER_ERROR(ErrorCode::kTimeout, fmt::format("no answer from the other process in {} ms", timeoutMs));
    iovec iov{static_cast<char*>(data) + done, bytes - done};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return systemError("recvmsg");
    if (n == 0) return GPUPEER_ERROR(ErrorCode::kSystem, "the other process closed the socket before answering");
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(fd, CMSG_DATA(c), sizeof(int));
    done += static_cast<std::size_t>(n);
  }
  return Status::ok();
}

TakenFd takeFdFrom(pid_t pid, int fd) {
  long pidfd = ::syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0) return {-1, errno, "pidfd_open"};
  long taken = ::syscall(SYS_pidfd_getfd, static_cast<int>(pidfd), fd, 0);
  int err = errno;
  ::close(static_cast<int>(pidfd));
  if (taken < 0) return {-1, err, "pidfd_getfd"};
  return {static_cast<int>(taken), 0, "pidfd_getfd"};
}

std::string whyTakeFdFailed(int err, int ptraceScope) {
  if (err == ENOSYS) return "the kernel has no pidfd_getfd (Linux 5.6 or later is needed)";
  if (err != EPERM) return std::strerror(err);
  switch (ptraceScope) {
    case 1:
      return "Yama ptrace_scope=1 lets a process without CAP_SYS_PTRACE take descriptors only from its own "
             "descendants, not from a sibling or parent rank";
    case 2: return "Yama ptrace_scope=2 allows pidfd_getfd only with CAP_SYS_PTRACE, which this process lacks";
    case 3: return "Yama ptrace_scope=3 forbids pidfd_getfd for every process";
    default: return "pidfd_getfd was refused (a seccomp profile or a security module that forbids ptrace access)";
  }
}

}  // namespace gpupeer::fdpass
