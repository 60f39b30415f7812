#include "cuda/device_memory.hpp"

#include <fmt/format.h>

#include "cuda/cuda_status.hpp"

namespace gpupeer {

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = o.ptr_;
    size_ = o.size_;
    device_ = o.device_;
    o.ptr_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

Status DeviceBuffer::allocate(int device, std::size_t bytes) {
  release();
  if (bytes == 0) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "device buffer of 0 bytes");
  GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
  cudaError_t err = cudaMalloc(&ptr_, bytes);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    ptr_ = nullptr;
    std::size_t freeBytes = 0, total = 0;
    cudaMemGetInfo(&freeBytes, &total);
    Status s = cudaFailure(err, "cudaMalloc", device, __FILE__, __LINE__);
    return Status(s.code(), fmt::format("cannot allocate {} bytes ({:.2f} GiB free of {:.2f} GiB)", bytes,
                                        freeBytes / 1073741824.0, total / 1073741824.0))
        .withCall("cudaMalloc")
        .withDevice(device, busIdOf(device))
        .withApiError(s.apiErrorName(), s.apiErrorText())
        .withLocation(__FILE__, __LINE__);
  }
  size_ = bytes;
  device_ = device;
  return Status::ok();
}

void DeviceBuffer::release() {
  if (!ptr_) return;
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(device_);
  cudaFree(ptr_);
  cudaSetDevice(previous);
  ptr_ = nullptr;
  size_ = 0;
}

Status setDeviceMemory(int device, void* p, int value, std::size_t bytes) {
  GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
  GPUPEER_CUDA_CHECK(device, cudaMemset(p, value, bytes));
  GPUPEER_CUDA_CHECK(device, cudaDeviceSynchronize());
  return Status::ok();
}

Status PinnedBuffer::allocate(std::size_t bytes, unsigned flags) {
  release();
  if (bytes == 0) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "pinned buffer of 0 bytes");
  GPUPEER_CUDA_CHECK(-1, cudaHostAlloc(&ptr_, bytes, flags));
  size_ = bytes;
  return Status::ok();
}

void PinnedBuffer::release() {
  if (ptr_) cudaFreeHost(ptr_);
  ptr_ = nullptr;
  size_ = 0;
}

Stream::~Stream() {
  if (!stream_) return;
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(device_);
  cudaStreamDestroy(stream_);
  cudaSetDevice(previous);
}

Status Stream::create(int device) {
  GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
  GPUPEER_CUDA_CHECK(device, cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  device_ = device;
  return Status::ok();
}

Event::~Event() {
  if (!event_) return;
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(device_);
  cudaEventDestroy(event_);
  cudaSetDevice(previous);
}

Status Event::create(int device) {
  GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
  GPUPEER_CUDA_CHECK(device, cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
  device_ = device;
  return Status::ok();
}

}  // namespace gpupeer
