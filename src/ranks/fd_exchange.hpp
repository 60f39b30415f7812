#pragma once
// Handing file descriptors (cuMem memory exported as POSIX descriptors) to the other ranks in
// one collective step. Descriptors cannot travel through the start-up exchange (a framework's
// store carries bytes only), so each rank that gives some listens on an abstract Unix socket of
// a random name and asks for a random token; both go to the others through the exchange. Every
// rank first connects to each offer it needs (the kernel queues the connection), then serves
// its own, then reads what it asked for: no rank waits for one that waits for it. Every wait is
// bounded by the caller's deadline. Internal.

#include <string>
#include <vector>

#include "core/unique_fd.hpp"
#include "gpupeer/status.hpp"
#include "ranks/socket_io.hpp"

namespace gpupeer {

class FdOffer {
 public:
  /// A listening socket of a fresh random name and a fresh token.
  static Result<FdOffer> open();
  FdOffer() = default;
  FdOffer(const FdOffer&) = delete;
  FdOffer& operator=(const FdOffer&) = delete;
  FdOffer(FdOffer&& o) noexcept;
  FdOffer& operator=(FdOffer&& o) noexcept;
  ~FdOffer();

  const std::string& name() const { return name_; }
  const std::string& token() const { return token_; }

  /// Accepts `clients` connections that present the token (any other is dropped) and gives each
  /// every one of `fds`, in order.
  Status serve(int clients, const std::vector<int>& fds, SocketDeadline deadline);

 private:
  int listenFd_ = -1;
  std::string name_, token_;
};

/// Connects to another rank's offer and presents its token; the connected socket.
Result<UniqueFd> connectToOffer(const std::string& name, const std::string& token, SocketDeadline deadline);

/// The `count` descriptors that the offer behind `sock` gives, in order.
Result<std::vector<UniqueFd>> receiveOffered(int sock, std::size_t count, SocketDeadline deadline);

}  // namespace gpupeer
