#pragma once
// The timing harness: several lanes (a stream each, possibly on different GPUs) enqueue
// `copies` operations behind one spin-kernel gate, so the clock starts with full queues and
// all lanes start together; each lane is timed with its own events.

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "cuda/device_memory.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

struct TimedLane {
  int device;
  cudaStream_t stream;
  std::function<cudaError_t(cudaStream_t)> enqueue;  ///< one operation
};

class GatedTimer {
 public:
  Status init();
  /// Seconds per operation for each lane, for one batch of `copies` operations per lane.
  Result<std::vector<double>> time(const std::vector<TimedLane>& lanes, int copies);

 private:
  PinnedBuffer flag_;
};

}  // namespace gpupeer
