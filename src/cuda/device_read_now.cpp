#include "cuda/device_read_now.hpp"

#include <cuda_runtime_api.h>

#include "cuda/cuda_status.hpp"
#include "cuda/device_guard.hpp"

namespace gpupeer {

Status readDeviceMemoryNow(int device, const void* from, void* to, std::size_t bytes) {
  DeviceGuard guard;
  GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  GPUPEER_CUDA_CHECK(device, cudaThreadExchangeStreamCaptureMode(&mode));
  cudaStream_t stream = nullptr;
  cudaError_t copied = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (copied == cudaSuccess) copied = cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToHost, stream);
  if (copied == cudaSuccess) copied = cudaStreamSynchronize(stream);
  if (stream != nullptr) cudaStreamDestroy(stream);
  cudaThreadExchangeStreamCaptureMode(&mode);
  GPUPEER_CUDA_CHECK(device, copied);
  return Status::ok();
}

}  // namespace gpupeer
