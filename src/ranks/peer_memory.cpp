#include "ranks/peer_memory.hpp"

#include <fmt/format.h>

#include "cuda/cuda_status.hpp"
#include "gpupeer/ipc_check.hpp"
#include "probe/probe_parts.hpp"

namespace gpupeer {

Result<SharedBuffer> shareBuffer(int device, void* pointer, std::size_t bytes) {
  SharedBuffer b;
  GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
  GPUPEER_CUDA_CHECK(device, cudaIpcGetMemHandle(&b.handle, pointer));
  b.pointer = reinterpret_cast<std::uint64_t>(pointer);
  b.bytes = bytes;
  return b;
}

Status MappedPeerBuffer::map(int device, const SharedBuffer& buffer, pid_t ownerPid) {
  device_ = device;
  if (ownerPid == getpid()) {
    // Threads of one process share the address space; CUDA refuses to open a handle of its own
    // process. Another GPU's memory is then reached through peer access, which the caller
    // enables.
    ptr_ = reinterpret_cast<void*>(buffer.pointer);
    return Status::ok();
  }
  GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
  const cudaError_t e = cudaIpcOpenMemHandle(&ptr_, buffer.handle, cudaIpcMemLazyEnablePeerAccess);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    ptr_ = nullptr;
    // Said as `gpupeer check --ipc` says it: what in this process's surroundings stands in the
    // way (its IPC namespace, ...), read now, with the KB entry of each.
    Snapshot here;
    probe::readProcessLimits(here, "");
    return ipcSharingFailure(ErrorCode::kCuda,
                             fmt::format("cudaIpcOpenMemHandle of a buffer of process {} on GPU{} failed: {} ({})",
                                         ownerPid, device, cudaGetErrorName(e), cudaGetErrorString(e)),
                             IpcMechanism::kCudaIpc, here.platform, "cuda/ipc-open-mem-handle-failed");
  }
  opened_ = true;
  return Status::ok();
}

Status MappedPeerBuffer::mapSegments(int device, const std::vector<UniqueFd>& fds,
                                     const std::vector<std::size_t>& bytes) {
  device_ = device;
  auto segments = std::make_unique<vmm::ImportedSegments>();
  GPUPEER_RETURN_IF_ERROR(segments->map(device, fds, bytes));
  ptr_ = segments->get();
  segments_ = std::move(segments);
  return Status::ok();
}

MappedPeerBuffer::~MappedPeerBuffer() {
  if (!opened_ || !ptr_) return;
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(device_);
  cudaIpcCloseMemHandle(ptr_);
  (void)cudaGetLastError();
  cudaSetDevice(previous);
}

}  // namespace gpupeer
