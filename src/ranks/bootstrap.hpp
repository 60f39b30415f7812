#pragma once
// Start-up exchange between the processes of one RankCommunicator: rank 0 listens on an
// abstract Unix socket named after the UniqueId's nonce, every other rank connects to it, and
// all-gathers go through rank 0 (a star: a few small messages at start-up, so no ring). Every
// wait is bounded by one deadline; the errors name the ranks that did not arrive. Internal.

#include <chrono>
#include <string>
#include <vector>

#include "gpupeer/rank_communicator.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

/// The abstract socket name (without the leading NUL) that `id` rendezvouses on; an error for
/// bytes that are not a gpupeer UniqueId.
Result<std::string> rendezvousName(const UniqueId& id);

class Bootstrap {
 public:
  using Clock = std::chrono::steady_clock;

  Bootstrap() = default;
  Bootstrap(const Bootstrap&) = delete;
  Bootstrap& operator=(const Bootstrap&) = delete;
  Bootstrap(Bootstrap&& other) noexcept;
  Bootstrap& operator=(Bootstrap&& other) noexcept;
  ~Bootstrap();

  /// Rank `rank` of `nranks` joins the rendezvous of `id`; rank 0 opens it. Returns once every
  /// rank has joined (rank 0) or rank 0 accepted this rank (the others), or kTimeout naming
  /// who is missing after `timeoutMs`. A second rendezvous on the same id while the first is
  /// open fails with kInvalidArgument.
  static Result<Bootstrap> join(int nranks, const UniqueId& id, int rank, int timeoutMs);

  /// Every rank's `blob` in rank order; each rank calls it with its own, in the same sequence.
  Result<std::vector<std::string>> allGather(const std::string& blob);

  int rank() const { return rank_; }
  int ranks() const { return nranks_; }

 private:
  int rank_ = 0, nranks_ = 0, timeoutMs_ = 0;
  int listenFd_ = -1;         // rank 0 while joining
  std::vector<int> peerFds_;  // rank 0: one per rank (its own -1); others: [0] = rank 0
  void closeAll();
  Clock::time_point deadline() const { return Clock::now() + std::chrono::milliseconds(timeoutMs_); }
};

}  // namespace gpupeer
