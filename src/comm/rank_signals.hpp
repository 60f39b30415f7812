#pragma once
// Ordering between ranks' streams for the copy-engine algorithm, in one of two ways: an event
// recorded on the sending stream and awaited on the receiving one, or (flags mode, needs P2P)
// a 32-bit flag written into the receiving GPU's memory by the sending stream
// (cuStreamWriteValue32, after a memory fence) and awaited by the receiving stream
// (cuStreamWaitValue32), which then clears it, so the same values serve every replay of a CUDA
// graph. Both cost ~10 us per crossing between GPUs on 2x H200; flags measured slower, so the
// communicator uses events unless GPUPEER_CE_SIGNALS=flags. A one-block kernel per rank that
// met its peers through flags in P2P memory, in place of the events that start and end the
// side streams, was slower still: all-gather of 128 MiB 197.2 against 188.0 us in graphs
// (176d235:bench/results/2026-11-22-h200x2-s9/1-meet-tail).

#include <cuda_runtime_api.h>

#include <vector>

#include "cuda/device_memory.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

class RankSignals {
 public:
  /// `flagsPerSender` distinct signals from each rank to each other rank; flags in GPU memory
  /// when `useFlags` (and the driver offers stream memory operations), else events.
  Status create(const std::vector<int>& devices, int flagsPerSender, bool useFlags);

  /// Enqueues on `stream` (of rank `from`): signal `flag` to rank `to`.
  Status post(int from, cudaStream_t stream, int to, int flag);
  /// Enqueues on `stream` (of rank `at`): wait until rank `from` has posted `flag` to `at`.
  Status wait(int at, cudaStream_t stream, int from, int flag);

 private:
  std::vector<int> devices_;
  int flags_ = 0;
  bool useFlags_ = false;
  std::vector<DeviceBuffer> words_;         // flags: per rank, [sender][flag] words
  std::vector<std::vector<Event>> events_;  // events: per rank, [flag] events it records
  std::uint32_t* word(int owner, int sender, int flag) const {
    return static_cast<std::uint32_t*>(words_[owner].get()) + sender * flags_ + flag;
  }
};

}  // namespace gpupeer
