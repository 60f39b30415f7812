#include "transfer/staging_memory.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cuda/cuda_status.hpp"
#include "gpupeer/log.hpp"

namespace gpupeer {

NumaPinnedBuffer::~NumaPinnedBuffer() {
  if (registered_) cudaHostUnregister(ptr_);
  if (ptr_) munmap(ptr_, size_);
}

Status NumaPinnedBuffer::allocate(std::size_t bytes, int numaNode) {
  if (bytes == 0) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "staging buffer of 0 bytes");
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("mmap of {} bytes: {}", bytes, std::strerror(errno)));
  ptr_ = p;
  size_ = bytes;
  placement_ = "kernel default";
  if (numaNode >= 0 && numaNode < 64) {
    // MPOL_PREFERRED (1): pages come from the node while it has memory, elsewhere otherwise.
    unsigned long mask = 1UL << numaNode;
    if (syscall(SYS_mbind, p, bytes, 1, &mask, 64, 0) == 0)
      placement_ = "GPU's NUMA node";
    else
      GPUPEER_INFO("mbind to NUMA node {} failed ({}); staging memory placed by the kernel", numaNode,
                   std::strerror(errno));
  }
  std::memset(p, 0, bytes);  // first touch places the pages under the policy
  GPUPEER_CUDA_CHECK(-1, cudaHostRegister(p, bytes, cudaHostRegisterPortable));
  registered_ = true;
  return Status::ok();
}

}  // namespace gpupeer
