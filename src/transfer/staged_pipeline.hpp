#pragma once
// Device -> pinned host -> device copies for one ordered pair of GPUs, chunked so that the
// device-to-host copy of chunk k+1 runs while chunk k goes host-to-device: the two PCIe links
// work at once and the copy approaches one link's rate instead of half of it.

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <vector>

#include "cuda/device_memory.hpp"
#include "gpupeer/status.hpp"
#include "transfer/staging_memory.hpp"

namespace gpupeer {

class StagedPipeline {
 public:
  /// Resources for src -> dst: `buffers` pinned chunks of `chunkBytes` on `numaNode`
  /// (-1: any), a stream on each GPU and an event per chunk and direction.
  Status init(int src, int dst, std::size_t chunkBytes, int buffers, int numaNode);
  ~StagedPipeline();

  /// Enqueues the copy after the work on `caller` (a stream of `callerDevice`) and makes later
  /// work on `caller` wait for it. Everything is events and async copies, so it can be
  /// captured in a CUDA graph.
  Status enqueue(void* dst, const void* src, std::size_t bytes, cudaStream_t caller, int callerDevice);

 private:
  int src_ = -1, dst_ = -1;
  std::size_t chunk_ = 0;
  std::vector<std::unique_ptr<NumaPinnedBuffer>> host_;
  Stream toHost_, fromHost_;
  std::vector<cudaEvent_t> staged_;     // chunk k is in host buffer k % n
  std::vector<cudaEvent_t> delivered_;  // host buffer k % n may be reused
  std::map<int, cudaEvent_t> start_;    // per caller device: an event records on its own device's streams
  cudaEvent_t doneToHost_ = nullptr, doneFromHost_ = nullptr;
};

}  // namespace gpupeer
