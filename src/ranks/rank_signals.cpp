#include "ranks/rank_signals.hpp"

#include "cuda/cuda_status.hpp"

namespace gpupeer {

Status RankSignals::create(const std::vector<int>& devices, int flagsPerSender) {
  devices_ = devices;
  const int n = static_cast<int>(devices.size());
  events_.resize(n);
  for (int r = 0; r < n; ++r) {
    events_[r].resize(flagsPerSender);
    for (Event& e : events_[r]) GPUPEER_RETURN_IF_ERROR(e.create(devices[r]));
  }
  return Status::ok();
}

Status RankSignals::post(int from, cudaStream_t stream, int /*to*/, int flag) {
  // One event per flag covers every receiver: recording it again at the same point of the
  // stream for the next receiver changes nothing.
  const int d = devices_[from];
  GPUPEER_CUDA_CHECK(d, cudaEventRecord(events_[from][flag].get(), stream));
  return Status::ok();
}

Status RankSignals::wait(int at, cudaStream_t stream, int from, int flag) {
  const int d = devices_[at];
  GPUPEER_CUDA_CHECK(d, cudaStreamWaitEvent(stream, events_[from][flag].get(), 0));
  return Status::ok();
}

}  // namespace gpupeer
