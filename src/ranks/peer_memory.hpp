#pragma once
// Mapping another rank's device memory into this process. The communicator's own buffers
// (cudaMalloc) travel as cudaIpcMemHandles inside the start-up exchange's blob: plain bytes, so
// the same blob goes through gpupeer's socket bootstrap and through a framework's store
// (AllGatherFn). Registered user buffers of cuMem memory (PyTorch's expandable segments,
// gpupeer_mem_alloc) come as POSIX file descriptors instead, passed over Unix sockets
// (ranks/fd_exchange.hpp) and mapped by mapSegments. Ranks of the same process (threads) use
// each other's pointers directly. Internal.

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "cuda/vmm_memory.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

/// One buffer as another rank needs it to map it.
struct SharedBuffer {
  cudaIpcMemHandle_t handle{};
  std::uint64_t pointer = 0;  ///< in the owner's address space (used within one process)
  std::uint64_t bytes = 0;
};

/// Exports `pointer` (the start of a cudaMalloc allocation of `bytes` on `device`).
Result<SharedBuffer> shareBuffer(int device, void* pointer, std::size_t bytes);

/// A peer's buffer mapped here; unmapped when destroyed (never waits for the peer).
class MappedPeerBuffer {
 public:
  MappedPeerBuffer() = default;
  MappedPeerBuffer(const MappedPeerBuffer&) = delete;
  MappedPeerBuffer& operator=(const MappedPeerBuffer&) = delete;
  MappedPeerBuffer(MappedPeerBuffer&& o) noexcept
      : ptr_(o.ptr_), opened_(o.opened_), device_(o.device_), segments_(std::move(o.segments_)) {
    o.ptr_ = nullptr;
    o.opened_ = false;
  }
  ~MappedPeerBuffer();

  /// Maps `buffer` of a rank in process `ownerPid` for this process's `device`.
  Status map(int device, const SharedBuffer& buffer, pid_t ownerPid);
  /// Maps a peer's cuMem segments (of `bytes[k]` each) from their descriptors, back to back.
  Status mapSegments(int device, const std::vector<UniqueFd>& fds, const std::vector<std::size_t>& bytes);
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
  bool opened_ = false;  // by cudaIpcOpenMemHandle (else the owner's own pointer)
  int device_ = -1;
  std::unique_ptr<vmm::ImportedSegments> segments_;  // where mapped by mapSegments
};

}  // namespace gpupeer
