#include "bench/gated_timer.hpp"

#include <atomic>

#include "cuda/copy_kernels.cuh"
#include "cuda/cuda_status.hpp"
#include "cuda/stream_wait.hpp"

namespace gpupeer {
namespace {

// Holding the gate longer than this means the host died; the spin gives up by itself.
constexpr unsigned long long kGateTimeoutNs = 5'000'000'000ULL;
constexpr double kBatchTimeoutSeconds = 60;

struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  int device = 0;
  ~EventPair() {
    cudaSetDevice(device);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};

}  // namespace

Status GatedTimer::init() {
  // Mapped and portable: every GPU's spin kernel reads the same host word.
  GPUPEER_RETURN_IF_ERROR(flag_.allocate(sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  *static_cast<volatile int*>(flag_.get()) = 0;
  return Status::ok();
}

Result<std::vector<double>> GatedTimer::time(const std::vector<TimedLane>& lanes, int copies) {
  volatile int* flag = static_cast<volatile int*>(flag_.get());
  *flag = 0;
  std::vector<EventPair> events(lanes.size());
  for (size_t i = 0; i < lanes.size(); ++i) {
    const TimedLane& lane = lanes[i];
    events[i].device = lane.device;
    GPUPEER_CUDA_CHECK(lane.device, cudaSetDevice(lane.device));
    GPUPEER_CUDA_CHECK(lane.device, cudaEventCreate(&events[i].start));
    GPUPEER_CUDA_CHECK(lane.device, cudaEventCreate(&events[i].stop));
    GPUPEER_CUDA_CHECK(lane.device, launchSpinUntilFlag(flag, kGateTimeoutNs, lane.stream));
    GPUPEER_CUDA_CHECK(lane.device, cudaEventRecord(events[i].start, lane.stream));
    for (int c = 0; c < copies; ++c) {
      cudaError_t err = lane.enqueue(lane.stream);
      if (err != cudaSuccess) {
        *flag = 1;  // release the gate so nothing waits for the timeout
        return cudaFailure(err, "enqueue of timed operation", lane.device, __FILE__, __LINE__);
      }
    }
    GPUPEER_CUDA_CHECK(lane.device, cudaEventRecord(events[i].stop, lane.stream));
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *flag = 1;
  std::vector<double> seconds;
  for (size_t i = 0; i < lanes.size(); ++i) {
    GPUPEER_RETURN_IF_ERROR(waitForStream(lanes[i].stream, lanes[i].device, kBatchTimeoutSeconds, "timed batch"));
    float ms = 0;
    GPUPEER_CUDA_CHECK(lanes[i].device, cudaEventElapsedTime(&ms, events[i].start, events[i].stop));
    seconds.push_back(ms / 1000.0 / copies);
  }
  return seconds;
}

}  // namespace gpupeer
