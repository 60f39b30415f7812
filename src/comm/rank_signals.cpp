#include "comm/rank_signals.hpp"

#include "cuda/cuda_status.hpp"
#include "cuda/driver_entry.hpp"

namespace gpupeer {
namespace {

// The driver's stream memory operations (values from cuda.h).
using WriteValueFn = int (*)(cudaStream_t, unsigned long long, unsigned, unsigned);
using WaitValueFn = int (*)(cudaStream_t, unsigned long long, unsigned, unsigned);
constexpr unsigned kWaitEqual = 0x1;       // CU_STREAM_WAIT_VALUE_EQ
constexpr unsigned kWriteWithFence = 0x0;  // CU_STREAM_WRITE_VALUE_DEFAULT: fenced after earlier work

WriteValueFn writeValue() {
  static WriteValueFn fn = driverEntryPoint<WriteValueFn>("cuStreamWriteValue32");
  return fn;
}
WaitValueFn waitValue() {
  static WaitValueFn fn = driverEntryPoint<WaitValueFn>("cuStreamWaitValue32");
  return fn;
}

Status driverFailure(int result, const char* call, int device) {
  return GPUPEER_ERROR(ErrorCode::kCuda, std::string(call) + " failed with CUresult " + std::to_string(result))
      .withCall(call)
      .withDevice(device, busIdOf(device));
}

}  // namespace

Status RankSignals::create(const std::vector<int>& devices, int flagsPerSender, bool useFlags) {
  devices_ = devices;
  flags_ = flagsPerSender;
  useFlags_ = useFlags && writeValue() && waitValue();
  const int n = static_cast<int>(devices.size());
  if (useFlags_) {
    words_.resize(n);
    for (int r = 0; r < n; ++r) {
      const std::size_t bytes = sizeof(std::uint32_t) * n * flags_;
      GPUPEER_RETURN_IF_ERROR(words_[r].allocate(devices[r], bytes));
      // Zero before the first signal is written or awaited.
      GPUPEER_RETURN_IF_ERROR(setDeviceMemory(devices[r], words_[r].get(), 0, bytes));
    }
  } else {
    events_.resize(n);
    for (int r = 0; r < n; ++r) {
      events_[r].resize(flags_);
      for (Event& e : events_[r]) GPUPEER_RETURN_IF_ERROR(e.create(devices[r]));
    }
  }
  return Status::ok();
}

Status RankSignals::post(int from, cudaStream_t stream, int to, int flag) {
  const int d = devices_[from];
  if (!useFlags_) {
    // One event per flag covers every receiver: recording it again at the same point of the
    // stream for the next receiver changes nothing.
    GPUPEER_CUDA_CHECK(d, cudaEventRecord(events_[from][flag].get(), stream));
    return Status::ok();
  }
  int r = writeValue()(stream, reinterpret_cast<unsigned long long>(word(to, from, flag)), 1, kWriteWithFence);
  if (r != 0) return driverFailure(r, "cuStreamWriteValue32", d);
  return Status::ok();
}

Status RankSignals::wait(int at, cudaStream_t stream, int from, int flag) {
  const int d = devices_[at];
  if (!useFlags_) {
    GPUPEER_CUDA_CHECK(d, cudaStreamWaitEvent(stream, events_[from][flag].get(), 0));
    return Status::ok();
  }
  auto address = reinterpret_cast<unsigned long long>(word(at, from, flag));
  int r = waitValue()(stream, address, 1, kWaitEqual);
  if (r != 0) return driverFailure(r, "cuStreamWaitValue32", d);
  // Cleared by the waiter, after the wait, on the same stream: ready for the next use.
  r = writeValue()(stream, address, 0, kWriteWithFence);
  if (r != 0) return driverFailure(r, "cuStreamWriteValue32", d);
  return Status::ok();
}

}  // namespace gpupeer
