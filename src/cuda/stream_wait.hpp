#pragma once
// Bounded waits: a stream that never finishes (broken P2P can stall a kernel) is reported as
// a timeout that names the device, instead of hanging the tool.

#include <cuda_runtime_api.h>

#include "gpupeer/status.hpp"

namespace gpupeer {

/// Polls `stream` until it completes, fails, or `timeoutSeconds` pass.
Status waitForStream(cudaStream_t stream, int device, double timeoutSeconds, const char* what);

}  // namespace gpupeer
