#pragma once
// Bounded reads and writes on a connected socket, and length-prefixed messages over them:
// the bootstrap's only I/O. Internal.

#include <sys/socket.h>
#include <sys/un.h>

#include <chrono>
#include <cstddef>
#include <string>

#include "gpupeer/status.hpp"

namespace gpupeer {

using SocketDeadline = std::chrono::steady_clock::time_point;

/// The largest message the bootstrap accepts: far above any exchange it makes, and a bound on
/// what a stray peer can make it allocate.
inline constexpr std::size_t kMaxSocketMessage = 1u << 20;

/// Writes all `bytes` (no SIGPIPE), or kTimeout / kSystem.
Status sendAll(int fd, const void* data, std::size_t bytes, SocketDeadline deadline);
/// Reads exactly `bytes`, or kTimeout, or kSystem when the peer closed or failed.
Status recvAll(int fd, void* data, std::size_t bytes, SocketDeadline deadline);

/// A 4-byte length, then the bytes.
Status sendMessage(int fd, const std::string& message, SocketDeadline deadline);
Result<std::string> recvMessage(int fd, SocketDeadline deadline);

/// The address of `name` in the abstract namespace (leading NUL: no file to clean up after a
/// crash) and its length.
sockaddr_un abstractAddress(const std::string& name, socklen_t& length);

/// Milliseconds until `deadline`, at least 0.
int millisecondsLeft(SocketDeadline deadline);

}  // namespace gpupeer
