#include "ranks/fd_exchange.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "core/fd_passing.hpp"
#include "core/hex.hpp"
#include "core/random_bytes.hpp"

namespace gpupeer {
namespace {

constexpr std::size_t kRandomBytes = 16;
// A connection that has not shown its token within this is dropped (a stray client must not
// hold the offer until the deadline).
constexpr int kTokenWaitMs = 2000;

Status systemError(const char* what) {
  return GPUPEER_ERROR(ErrorCode::kSystem,
                       fmt::format("passing cuMem descriptors: {}: {}", what, std::strerror(errno)));
}

Result<std::string> randomHex() {
  unsigned char bytes[kRandomBytes];
  GPUPEER_RETURN_IF_ERROR(fillRandom(bytes, sizeof bytes));
  return toHex(bytes, sizeof bytes);
}

}  // namespace

Result<FdOffer> FdOffer::open() {
  FdOffer o;
  Result<std::string> name = randomHex(), token = randomHex();
  if (!name.isOk()) return name.status();
  if (!token.isOk()) return token.status();
  o.name_ = "gpupeer-fds-" + name.value();
  o.token_ = token.value();
  o.listenFd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (o.listenFd_ < 0) return systemError("socket");
  socklen_t length = 0;
  const sockaddr_un address = abstractAddress(o.name_, length);
  if (::bind(o.listenFd_, reinterpret_cast<const sockaddr*>(&address), length) != 0) return systemError("bind");
  if (::listen(o.listenFd_, 64) != 0) return systemError("listen");
  return o;
}

FdOffer::FdOffer(FdOffer&& o) noexcept { *this = std::move(o); }

FdOffer& FdOffer::operator=(FdOffer&& o) noexcept {
  if (this != &o) {
    if (listenFd_ >= 0) ::close(listenFd_);
    listenFd_ = std::exchange(o.listenFd_, -1);
    name_ = std::move(o.name_);
    token_ = std::move(o.token_);
  }
  return *this;
}

FdOffer::~FdOffer() {
  if (listenFd_ >= 0) ::close(listenFd_);
}

Status FdOffer::serve(int clients, const std::vector<int>& fds, SocketDeadline deadline) {
  for (int served = 0; served < clients;) {
    pollfd p{listenFd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, millisecondsLeft(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return systemError("poll");
    if (ready == 0)
      return GPUPEER_ERROR(
          ErrorCode::kTimeout,
          fmt::format("passing cuMem descriptors: {} of {} ranks came for this rank's", served, clients));
    UniqueFd client(::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC));
    if (client.get() < 0) return systemError("accept");
    std::string token(token_.size(), '\0');
    const SocketDeadline tokenBound =
        std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(kTokenWaitMs));
    if (!recvAll(client.get(), token.data(), token.size(), tokenBound).isOk() || token != token_) continue;
    for (std::size_t k = 0; k < fds.size(); ++k) {
      const std::uint32_t index = static_cast<std::uint32_t>(k);
      GPUPEER_RETURN_IF_ERROR(fdpass::sendWithFd(client.get(), &index, sizeof index, fds[k]));
    }
    ++served;
  }
  return Status::ok();
}

Result<UniqueFd> connectToOffer(const std::string& name, const std::string& token, SocketDeadline deadline) {
  UniqueFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (sock.get() < 0) return systemError("socket");
  socklen_t length = 0;
  const sockaddr_un address = abstractAddress(name, length);
  if (::connect(sock.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0)
    return GPUPEER_ERROR(ErrorCode::kSystem,
                         fmt::format("passing cuMem descriptors: cannot connect to a peer's socket: {} (ranks in "
                                     "different network namespaces cannot reach each other's abstract sockets)",
                                     std::strerror(errno)));
  GPUPEER_RETURN_IF_ERROR(sendAll(sock.get(), token.data(), token.size(), deadline));
  return sock;
}

Result<std::vector<UniqueFd>> receiveOffered(int sock, std::size_t count, SocketDeadline deadline) {
  std::vector<UniqueFd> out;
  for (std::size_t k = 0; k < count; ++k) {
    std::uint32_t index = 0;
    int fd = -1;
    GPUPEER_RETURN_IF_ERROR(fdpass::receiveWithFd(sock, &index, sizeof index, &fd, millisecondsLeft(deadline)));
    UniqueFd owned(fd);
    if (fd < 0 || index != k)
      return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("passing cuMem descriptors: segment {} came as {} {}", k,
                                                           index, fd < 0 ? "without a descriptor" : ""));
    out.push_back(std::move(owned));
  }
  return out;
}

}  // namespace gpupeer
