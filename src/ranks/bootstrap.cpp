#include "ranks/bootstrap.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <thread>
#include <utility>

#include "core/hex.hpp"
#include "core/random_bytes.hpp"
#include "ranks/socket_io.hpp"

namespace gpupeer {
namespace {

constexpr char kMagic[8] = {'g', 'p', 'u', 'p', 'e', 'e', 'r', '1'};
constexpr std::size_t kNonceBytes = 16;
// A rank that connects first waits for rank 0's verdict a little longer than rank 0 waits for
// the others, so that rank 0's explanation (who is missing) reaches it rather than a timeout.
constexpr int kVerdictGraceMs = 2000;
const std::string kJoined = "joined";

struct Hello {
  char magic[8];
  char nonce[kNonceBytes];
  std::uint32_t rank, nranks;
};

Status systemError(const std::string& what) {
  return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("bootstrap: {}: {}", what, std::strerror(errno)));
}

std::string missingRanks(const std::vector<int>& fds) {
  std::string list;
  for (std::size_t r = 1; r < fds.size(); ++r)
    if (fds[r] < 0) list += (list.empty() ? "" : ", ") + std::to_string(r);
  return list;
}

}  // namespace

Result<UniqueId> makeUniqueId() {
  UniqueId id;
  std::memcpy(id.bytes.data(), kMagic, sizeof kMagic);
  char* nonce = id.bytes.data() + sizeof kMagic;
  GPUPEER_RETURN_IF_ERROR(fillRandom(nonce, kNonceBytes));
  return id;
}

std::string uniqueIdToHex(const UniqueId& id) { return toHex(id.bytes.data(), id.bytes.size()); }

Result<UniqueId> uniqueIdFromHex(std::string_view text) {
  UniqueId id;
  if (!fromHex(text, id.bytes.data(), id.bytes.size()))
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("a communicator id is {} hex digits, not {} characters of text",
                                     2 * UniqueId::kBytes, text.size()));
  return id;
}

Result<std::string> rendezvousName(const UniqueId& id) {
  if (std::memcmp(id.bytes.data(), kMagic, sizeof kMagic) != 0)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         "this UniqueId was not made by gpupeer::makeUniqueId (or its bytes were damaged on the way)");
  return "gpupeer-" + toHex(id.bytes.data() + sizeof kMagic, kNonceBytes);
}

Bootstrap::Bootstrap(Bootstrap&& other) noexcept { *this = std::move(other); }
Bootstrap& Bootstrap::operator=(Bootstrap&& other) noexcept {
  if (this != &other) {
    closeAll();
    rank_ = other.rank_;
    nranks_ = other.nranks_;
    timeoutMs_ = other.timeoutMs_;
    listenFd_ = std::exchange(other.listenFd_, -1);
    peerFds_ = std::move(other.peerFds_);
    other.peerFds_.clear();
  }
  return *this;
}
Bootstrap::~Bootstrap() { closeAll(); }

void Bootstrap::closeAll() {
  if (listenFd_ >= 0) close(listenFd_);
  listenFd_ = -1;
  for (int fd : peerFds_)
    if (fd >= 0) close(fd);
  peerFds_.clear();
}

Result<Bootstrap> Bootstrap::join(int nranks, const UniqueId& id, int rank, int timeoutMs) {
  if (nranks < 1 || rank < 0 || rank >= nranks || timeoutMs < 1)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("bootstrap: rank {} of {} ranks with a {} ms bound", rank, nranks, timeoutMs));
  Result<std::string> name = rendezvousName(id);
  if (!name.isOk()) return name.status();
  Bootstrap b;
  b.rank_ = rank;
  b.nranks_ = nranks;
  b.timeoutMs_ = timeoutMs;
  if (nranks == 1) return b;
  socklen_t length = 0;
  const sockaddr_un address = abstractAddress(name.value(), length);
  Hello hello{};
  std::memcpy(hello.magic, kMagic, sizeof kMagic);
  std::memcpy(hello.nonce, id.bytes.data() + sizeof kMagic, kNonceBytes);
  hello.rank = static_cast<std::uint32_t>(rank);
  hello.nranks = static_cast<std::uint32_t>(nranks);

  if (rank != 0) {
    const SocketDeadline deadline = b.deadline() + std::chrono::milliseconds(kVerdictGraceMs);
    // Rank 0 may not listen yet: retry until the bound.
    for (;;) {
      const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) return systemError("socket");
      if (connect(fd, reinterpret_cast<const sockaddr*>(&address), length) == 0) {
        b.peerFds_ = {fd};
        break;
      }
      close(fd);
      if (millisecondsLeft(deadline) <= kVerdictGraceMs)
        return GPUPEER_ERROR(ErrorCode::kTimeout,
                             fmt::format("rank {}: rank 0 did not open the rendezvous {} within {} ms (did rank 0 "
                                         "call init with this id?)",
                                         rank, name.value(), timeoutMs));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    GPUPEER_RETURN_IF_ERROR(sendAll(b.peerFds_[0], &hello, sizeof hello, deadline));
    Result<std::string> verdict = recvMessage(b.peerFds_[0], deadline);
    if (!verdict.isOk())
      return GPUPEER_ERROR(verdict.status().code(), fmt::format("rank {}: no word from rank 0 on joining: {}", rank,
                                                                verdict.status().message()));
    if (verdict.value() != kJoined) return GPUPEER_ERROR(ErrorCode::kTimeout, verdict.value());
    return b;
  }

  b.listenFd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (b.listenFd_ < 0) return systemError("socket");
  if (bind(b.listenFd_, reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    if (errno == EADDRINUSE)
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("rank 0: the rendezvous {} is in use: another communicator is starting with "
                                       "the same UniqueId (make a new id per communicator)",
                                       name.value()));
    return systemError("bind " + name.value());
  }
  if (listen(b.listenFd_, 64) != 0) return systemError("listen");
  b.peerFds_.assign(nranks, -1);
  const SocketDeadline deadline = b.deadline();
  int joined = 1;
  Status failure;
  while (joined < nranks && failure.isOk()) {
    pollfd p{b.listenFd_, POLLIN, 0};
    if (poll(&p, 1, millisecondsLeft(deadline)) <= 0) {
      if (millisecondsLeft(deadline) > 0) continue;  // EINTR
      failure = GPUPEER_ERROR(ErrorCode::kTimeout,
                              fmt::format("rank(s) {} of {} did not join within {} ms (not started, crashed, or "
                                          "given another UniqueId)",
                                          missingRanks(b.peerFds_), nranks, timeoutMs));
      break;
    }
    const int fd = accept4(b.listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    // A stray or hostile client gets a short while to say hello, then is dropped.
    Hello got{};
    const SocketDeadline helloBy = std::min(deadline, Clock::now() + std::chrono::milliseconds(1000));
    if (!recvAll(fd, &got, sizeof got, helloBy).isOk() || std::memcmp(got.magic, kMagic, sizeof kMagic) != 0 ||
        std::memcmp(got.nonce, hello.nonce, kNonceBytes) != 0) {
      close(fd);
      continue;
    }
    if (got.nranks != hello.nranks || got.rank == 0 || got.rank >= hello.nranks || b.peerFds_[got.rank] >= 0) {
      (void)sendMessage(fd,
                        fmt::format("rank {} joined a communicator of {} ranks as rank {} of {}: every rank "
                                    "must give the same number of ranks and a rank of its own",
                                    got.rank, nranks, got.rank, got.nranks),
                        deadline);
      close(fd);
      failure = GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                              fmt::format("rank 0: a peer joined as rank {} of {} ranks; this communicator has {} "
                                          "ranks{}",
                                          got.rank, got.nranks, nranks,
                                          got.rank < hello.nranks && got.rank > 0 && b.peerFds_[got.rank] >= 0
                                              ? " and that rank had joined already"
                                              : ""));
      break;
    }
    b.peerFds_[got.rank] = fd;
    ++joined;
  }
  close(b.listenFd_);
  b.listenFd_ = -1;
  const std::string verdict = failure.isOk() ? kJoined : failure.message();
  for (int fd : b.peerFds_)
    if (fd >= 0) (void)sendMessage(fd, verdict, Clock::now() + std::chrono::milliseconds(kVerdictGraceMs));
  if (!failure.isOk()) return failure;
  return b;
}

Result<std::vector<std::string>> Bootstrap::allGather(const std::string& blob) {
  std::vector<std::string> all(nranks_);
  all[rank_] = blob;
  if (nranks_ == 1) return all;
  const SocketDeadline deadline = this->deadline();
  if (rank_ != 0) {
    GPUPEER_RETURN_IF_ERROR(sendMessage(peerFds_[0], blob, deadline));
    for (int r = 0; r < nranks_; ++r) {
      Result<std::string> got = recvMessage(peerFds_[0], deadline);
      if (!got.isOk())
        return GPUPEER_ERROR(got.status().code(),
                             fmt::format("rank {}: exchange through rank 0 failed (rank 0 or another rank left or "
                                         "did not call in within {} ms): {}",
                                         rank_, timeoutMs_, got.status().message()));
      all[r] = std::move(got).value();
    }
    return all;
  }
  for (int r = 1; r < nranks_; ++r) {
    Result<std::string> got = recvMessage(peerFds_[r], deadline);
    if (!got.isOk())
      return GPUPEER_ERROR(got.status().code(), fmt::format("rank 0: rank {} did not send its part of the exchange "
                                                            "within {} ms: {}",
                                                            r, timeoutMs_, got.status().message()));
    all[r] = std::move(got).value();
  }
  for (int r = 1; r < nranks_; ++r)
    for (const std::string& part : all) GPUPEER_RETURN_IF_ERROR(sendMessage(peerFds_[r], part, deadline));
  return all;
}

}  // namespace gpupeer
