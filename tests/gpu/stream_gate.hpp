#pragma once
// Holds a CUDA stream until the test opens the gate: a host function on the stream that waits
// on a flag, so the work enqueued after it never starts (a rank that never reaches its call).
// It gives up after 60 s so that a broken test cannot hold the GPU machine. CUDA alone, so the
// NCCL programs that know nothing of gpupeer use it too.

#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace gpupeer::testing {

struct StreamGate {
  std::atomic<bool> open{false};

  /// Enqueues the wait on `stream`.
  cudaError_t hold(cudaStream_t stream) { return cudaLaunchHostFunc(stream, wait, this); }

  static void CUDART_CB wait(void* self) {
    auto* gate = static_cast<StreamGate*>(self);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!gate->open.load() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
};

}  // namespace gpupeer::testing
