#pragma once
// Pinned host memory placed on a chosen NUMA node: the staging buffers of the host-staged
// pipeline sit next to the GPUs they serve.

#include <cstddef>

#include "gpupeer/status.hpp"

namespace gpupeer {

class NumaPinnedBuffer {
 public:
  NumaPinnedBuffer() = default;
  NumaPinnedBuffer(const NumaPinnedBuffer&) = delete;
  NumaPinnedBuffer& operator=(const NumaPinnedBuffer&) = delete;
  ~NumaPinnedBuffer();
  /// mmap + mbind(MPOL_PREFERRED, node) + first touch + cudaHostRegister(portable). A node
  /// of -1 leaves placement to the kernel. `placement` says what was done.
  Status allocate(std::size_t bytes, int numaNode);
  void* get() const { return ptr_; }
  const char* placement() const { return placement_; }

 private:
  void* ptr_ = nullptr;
  std::size_t size_ = 0;
  bool registered_ = false;
  const char* placement_ = "none";
};

}  // namespace gpupeer
