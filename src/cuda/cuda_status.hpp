#pragma once
// Turning a cudaError_t into a Status that names the call, the device, the error and the KB
// entry. Host-only; included by .cpp and .cu files alike.

#include <cuda_runtime_api.h>

#include <string>

#include "gpupeer/error_kb.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

/// PCI bus id of a CUDA ordinal, or "" if CUDA cannot tell.
std::string busIdOf(int device);

inline Status cudaFailure(cudaError_t err, const char* call, int device, const char* file, int line, int peer = -1) {
  Status s(ErrorCode::kCuda, cudaGetErrorString(err));
  s.withCall(call).withApiError(cudaGetErrorName(err), cudaGetErrorString(err));
  if (device >= 0) s.withDevice(device, busIdOf(device));
  if (peer >= 0) s.withDevice(peer, busIdOf(peer));
  s.withLocation(file, line).withKbId(kbIdForApiError(cudaGetErrorName(err)));
  return s;
}

}  // namespace gpupeer

/// Checks a CUDA runtime call made for `device`; returns a Status from the enclosing function.
#define GPUPEER_CUDA_CHECK(device, expr)                                                  \
  do {                                                                                    \
    cudaError_t gpupeer_err_ = (expr);                                                    \
    if (gpupeer_err_ != cudaSuccess) {                                                    \
      (void)cudaGetLastError(); /* the error is reported here; do not leave it pending */ \
      return ::gpupeer::cudaFailure(gpupeer_err_, #expr, (device), __FILE__, __LINE__);   \
    }                                                                                     \
  } while (0)
