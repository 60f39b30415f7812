#pragma once
// One host thread per rank after the first, so that an operation's kernel launches on several
// GPUs happen at the same time instead of one after another: from one thread, each launch
// costs ~2 us of host time, and the GPUs wait for the slowest rank's launch. Threads spin
// briefly for the next job (back-to-back operations) and then sleep.

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "gpupeer/status.hpp"

namespace gpupeer {

/// Whether launch threads help: only when every launching thread (the caller and one per
/// further rank) can have a CPU of its own. With fewer CPUs a spinning thread takes the CPU
/// the others need, which made small operations a thousand times slower (docs/collectives.md,
/// tuned constants).
bool launchThreadsHelp(int cpusAvailable, int ranks);

/// The CPUs this process may run on (its affinity mask), at least 1.
int cpusAvailable();

class LaunchPool {
 public:
  /// Calls job(context, rank) for one rank.
  using Job = Status (*)(const void* context, int rank);

  /// Threads for ranks 1..ranks-1, each bound to its GPU (`devices`).
  explicit LaunchPool(const std::vector<int>& devices);
  ~LaunchPool();
  LaunchPool(const LaunchPool&) = delete;
  LaunchPool& operator=(const LaunchPool&) = delete;

  /// Runs job for every rank: rank 0 on the calling thread (whose current device the caller
  /// sets), the others on their threads; returns when all are done, with the first error.
  Status runAll(Job job, const void* context);

 private:
  struct Worker;
  void loop(Worker& w);
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<bool> stop_{false};
};

}  // namespace gpupeer
