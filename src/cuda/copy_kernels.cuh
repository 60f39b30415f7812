#pragma once
// Device copies launched by host functions that return the launch's cudaError_t.
// Host code includes this header without needing nvcc.

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpupeer {

/// Copies `bytes` from `src` to `dst` with SM loads and stores; either pointer may be peer
/// memory (the kernel runs on the current device). Any size and alignment: when both
/// pointers share their alignment modulo 16 the body moves in 16-byte vectors, else bytes.
/// `blocks` 0 picks a grid for the current device.
cudaError_t launchSmCopy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream,
                         int blocks = 0);

/// A kernel that spins until *flag becomes non-zero (set from the host through mapped
/// memory) or `timeoutNs` passes. Used to hold back a batch of enqueued work so that the
/// timed region starts with a full queue.
cudaError_t launchSpinUntilFlag(volatile int* flag, unsigned long long timeoutNs, cudaStream_t stream);

}  // namespace gpupeer
