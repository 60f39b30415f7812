#pragma once
// Reading a few words of device memory while kernels may be stuck waiting for a peer: what a
// watchdog thread needs to learn that they are.

#include <cstddef>

#include "gpupeer/status.hpp"

namespace gpupeer {

/// Copies `bytes` at `from` (device memory of `device`) to the host memory `to` and waits for
/// that copy only. It runs on a non-blocking stream of its own, so kernels on the caller's
/// streams that wait for a dead peer do not hold it, and in relaxed capture mode, so a capture
/// under way in this thread or another is neither failed nor spoiled. The calling thread's
/// current device is left as it was.
Status readDeviceMemoryNow(int device, const void* from, void* to, std::size_t bytes);

}  // namespace gpupeer
