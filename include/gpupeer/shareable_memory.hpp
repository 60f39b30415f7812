#pragma once
// Device memory that the ranks of a RankCommunicator in other processes can map when it is
// registered (RankCommunicator::registerBuffer), as NCCL's ncclMemAlloc is for
// ncclCommRegister: CUDA virtual memory (cuMemCreate) made with the POSIX file descriptor handle
// type. cudaMalloc memory can be registered too; this is for allocators that would otherwise
// give memory no other process can map (a torch.cuda.MemPool over gpupeer_mem_alloc,
// python/gpupeer/torch.py's mem_pool).

#include <cstddef>

#include "gpupeer/status.hpp"

namespace gpupeer {

/// At least `bytes` (rounded up to the GPU's allocation granularity, 2 MiB on Hopper) of
/// `device`'s memory, readable and writable by `device`.
Result<void*> allocateShareable(int device, std::size_t bytes);
/// Frees memory of allocateShareable; kInvalidArgument for any other pointer.
Status freeShareable(void* ptr);

}  // namespace gpupeer
