#pragma once
// Owning handles for device memory, pinned host memory and streams. Each frees on its own
// device; moves transfer ownership.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpupeer/status.hpp"

namespace gpupeer {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = static_cast<DeviceBuffer&&>(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  ~DeviceBuffer() { release(); }

  /// cudaMalloc of `bytes` on `device`; kInvalidArgument for 0 bytes, kCuda (with the
  /// device and free memory) when it does not fit.
  Status allocate(int device, std::size_t bytes);
  void release();
  void* get() const { return ptr_; }
  std::uint8_t* bytes() const { return static_cast<std::uint8_t*>(ptr_); }
  std::size_t size() const { return size_; }
  int device() const { return device_; }

 private:
  void* ptr_ = nullptr;
  std::size_t size_ = 0;
  int device_ = -1;
};

/// Sets `bytes` of `p` on `device` to `value` and waits until that is done. cudaMemset runs on
/// the legacy stream, which the non-blocking streams every copy and kernel here run on do not
/// wait for: memory cleared for them must be cleared before they are given work.
Status setDeviceMemory(int device, void* p, int value, std::size_t bytes);

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { release(); }
  Status allocate(std::size_t bytes, unsigned flags = cudaHostAllocDefault);
  void release();
  void* get() const { return ptr_; }
  std::uint8_t* bytes() const { return static_cast<std::uint8_t*>(ptr_); }
  std::size_t size() const { return size_; }

 private:
  void* ptr_ = nullptr;
  std::size_t size_ = 0;
};

class Stream {
 public:
  Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream(Stream&& o) noexcept : stream_(o.stream_), device_(o.device_) { o.stream_ = nullptr; }
  ~Stream();
  /// A non-blocking stream on `device`.
  Status create(int device);
  cudaStream_t get() const { return stream_; }
  int device() const { return device_; }

 private:
  cudaStream_t stream_ = nullptr;
  int device_ = -1;
};

/// An event without timing (cheap to record and wait on), for ordering streams of any device.
class Event {
 public:
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& o) noexcept : event_(o.event_), device_(o.device_) { o.event_ = nullptr; }
  ~Event();
  Status create(int device);
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
  int device_ = -1;
};

}  // namespace gpupeer
