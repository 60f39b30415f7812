#pragma once
// Ordering between ranks' streams for the copy-engine algorithm and the ring: an event recorded
// on the sending stream and awaited on the receiving one (~10 us per crossing between GPUs on
// 2x H200). Flags written and awaited by the streams (cuStreamWriteValue32/WaitValue32) and a
// one-block kernel per rank meeting its peers through flags in P2P memory both measured slower
// (docs/collectives.md, tuned constants).

#include <cuda_runtime_api.h>

#include <vector>

#include "cuda/device_memory.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

class RankSignals {
 public:
  /// `flagsPerSender` distinct signals from each rank to each other rank.
  Status create(const std::vector<int>& devices, int flagsPerSender);

  /// Enqueues on `stream` (of rank `from`): signal `flag` to rank `to`.
  Status post(int from, cudaStream_t stream, int to, int flag);
  /// Enqueues on `stream` (of rank `at`): wait until rank `from` has posted `flag` to `at`.
  Status wait(int at, cudaStream_t stream, int from, int flag);

 private:
  std::vector<int> devices_;
  std::vector<std::vector<Event>> events_;  // per rank, [flag] events it records
};

}  // namespace gpupeer
