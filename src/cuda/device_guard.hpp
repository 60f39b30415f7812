#pragma once
// Puts the calling thread's CUDA device back when a scope ends: library calls switch to the
// device they work on and must leave the caller's current device as it was.

#include <cuda_runtime_api.h>

namespace gpupeer {

class DeviceGuard {
 public:
  DeviceGuard() { cudaGetDevice(&previous_); }
  ~DeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace gpupeer
