#include "ranks/socket_io.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gpupeer {
namespace {

// Waits until `fd` is ready for `events` or the deadline passes.
Status awaitReady(int fd, short events, SocketDeadline deadline, const char* what) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, millisecondsLeft(deadline));
    if (n > 0) return Status::ok();
    if (n == 0) return GPUPEER_ERROR(ErrorCode::kTimeout, fmt::format("bootstrap: timed out waiting to {}", what));
    if (errno != EINTR)
      return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("bootstrap: poll failed: {}", std::strerror(errno)));
  }
}

}  // namespace

sockaddr_un abstractAddress(const std::string& name, socklen_t& length) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path + 1, name.data(), std::min(name.size(), sizeof a.sun_path - 1));
  length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + std::min(name.size(), sizeof a.sun_path - 1));
  return a;
}

int millisecondsLeft(SocketDeadline deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

Status sendAll(int fd, const void* data, std::size_t bytes, SocketDeadline deadline) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    GPUPEER_RETURN_IF_ERROR(awaitReady(fd, POLLOUT, deadline, "send"));
    const ssize_t n = send(fd, p, bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0)
      return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("bootstrap: send failed: {}", std::strerror(errno)));
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return Status::ok();
}

Status recvAll(int fd, void* data, std::size_t bytes, SocketDeadline deadline) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    GPUPEER_RETURN_IF_ERROR(awaitReady(fd, POLLIN, deadline, "receive"));
    const ssize_t n = recv(fd, p, bytes, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n == 0) return GPUPEER_ERROR(ErrorCode::kSystem, "bootstrap: the peer closed the connection");
    if (n < 0)
      return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("bootstrap: receive failed: {}", std::strerror(errno)));
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return Status::ok();
}

Status sendMessage(int fd, const std::string& message, SocketDeadline deadline) {
  const std::uint32_t length = static_cast<std::uint32_t>(message.size());
  GPUPEER_RETURN_IF_ERROR(sendAll(fd, &length, sizeof length, deadline));
  return sendAll(fd, message.data(), message.size(), deadline);
}

Result<std::string> recvMessage(int fd, SocketDeadline deadline) {
  std::uint32_t length = 0;
  GPUPEER_RETURN_IF_ERROR(recvAll(fd, &length, sizeof length, deadline));
  if (length > kMaxSocketMessage)
    return GPUPEER_ERROR(ErrorCode::kParse,
                         fmt::format("bootstrap: a message of {} bytes is announced (at most {}): not a gpupeer peer",
                                     length, kMaxSocketMessage));
  std::string message(length, '\0');
  GPUPEER_RETURN_IF_ERROR(recvAll(fd, message.data(), length, deadline));
  return message;
}

}  // namespace gpupeer
