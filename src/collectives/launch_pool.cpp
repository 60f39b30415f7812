#include "collectives/launch_pool.hpp"

#include <cuda_runtime_api.h>
#include <sched.h>

#include <algorithm>
#include <array>

#include "gpupeer/collective_types.hpp"

namespace gpupeer {

bool launchThreadsHelp(int cpusAvailable, int ranks) { return ranks > 1 && cpusAvailable >= ranks; }

int cpusAvailable() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

struct LaunchPool::Worker {
  int rank = 0, device = 0;
  std::atomic<std::uint64_t> posted{0};  // jobs handed over
  std::atomic<std::uint64_t> done{0};    // jobs finished
  Job job = nullptr;
  const void* context = nullptr;
  Status result;
  std::thread thread;
};

LaunchPool::LaunchPool(const std::vector<int>& devices) {
  for (std::size_t r = 1; r < devices.size(); ++r) {
    auto w = std::make_unique<Worker>();
    w->rank = static_cast<int>(r);
    w->device = devices[r];
    workers_.push_back(std::move(w));
  }
  for (auto& w : workers_) w->thread = std::thread([this, worker = w.get()] { loop(*worker); });
}

LaunchPool::~LaunchPool() {
  stop_ = true;
  for (auto& w : workers_) {
    w->posted.fetch_add(1);
    w->posted.notify_one();
    w->thread.join();
  }
}

void LaunchPool::loop(Worker& w) {
  cudaSetDevice(w.device);
  std::uint64_t seen = 0;
  for (;;) {
    // Spin a few milliseconds (back-to-back operations arrive microseconds apart), then sleep.
    for (int i = 0; i < 200000 && w.posted.load(std::memory_order_acquire) == seen; ++i) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
    w.posted.wait(seen, std::memory_order_acquire);
    seen = w.posted.load(std::memory_order_acquire);
    if (stop_) return;
    w.result = w.job(w.context, w.rank);
    w.done.store(seen, std::memory_order_release);
  }
}

Status LaunchPool::runAll(Job job, const void* context) {
  std::array<std::uint64_t, kMaxCommRanks> tickets{};  // no allocation per operation
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    Worker& w = *workers_[i];
    w.job = job;
    w.context = context;
    tickets[i] = w.posted.load(std::memory_order_relaxed) + 1;
    w.posted.store(tickets[i], std::memory_order_release);
    w.posted.notify_one();
  }
  Status first = job(context, 0);
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    Worker& w = *workers_[i];
    while (w.done.load(std::memory_order_acquire) != tickets[i]) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
    if (first.isOk() && !w.result.isOk()) first = w.result;
  }
  return first;
}

}  // namespace gpupeer
