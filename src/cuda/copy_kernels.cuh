#pragma once
// Device copies launched by host functions that return the launch's cudaError_t.
// Host code includes this header without needing nvcc.

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpupeer {

/// How an SM copy moves its aligned body.
enum class SmCopyKernel {
  kVector,  ///< every thread loads and stores 16-byte vectors, 4 in flight
  kBulk,    ///< Hopper bulk copies through shared memory (falls back to kVector before sm_90)
};

/// Copies `bytes` from `src` to `dst` with SM loads and stores; either pointer may be peer
/// memory (the kernel runs on the current device). Any size and alignment: when both
/// pointers share their alignment modulo 16 the body moves by `kernel`, else byte by byte.
/// `blocks` 0 picks a grid for the current device.
cudaError_t launchSmCopy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream, int blocks = 0,
                         SmCopyKernel kernel = SmCopyKernel::kVector);

/// A kernel that spins until *flag becomes non-zero (set from the host through mapped
/// memory) or `timeoutNs` passes. Used to hold back a batch of enqueued work so that the
/// timed region starts with a full queue.
cudaError_t launchSpinUntilFlag(volatile int* flag, unsigned long long timeoutNs, cudaStream_t stream);

}  // namespace gpupeer

namespace gpupeer {

/// Writes bytes [0, bytes) of the pattern stream for `seed` (gpupeer/pattern.hpp) into dst.
cudaError_t launchFillPattern(void* dst, std::size_t bytes, unsigned long long seed, cudaStream_t stream);

/// Counts bytes of `data` that differ from the pattern stream; *mismatches and *firstOffset
/// (device memory, set to 0 and ~0 by the caller) receive the count and the lowest offset.
cudaError_t launchVerifyPattern(const void* data, std::size_t bytes, unsigned long long seed,
                                unsigned long long* mismatches, unsigned long long* firstOffset, cudaStream_t stream);

}  // namespace gpupeer

namespace gpupeer {

/// Whether `device` has the bulk copy engine (compute capability 9.0 or newer).
bool bulkCopySupported(int device);

/// Copies the largest prefix of whole 32 KiB chunks with the bulk copy kernel; *copied says
/// how many bytes it took (0 when the pointers are not 16-byte aligned). The caller moves the
/// rest. `blocks` 0: 132.
cudaError_t launchBulkCopy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream, int blocks,
                           std::size_t* copied);

}  // namespace gpupeer
