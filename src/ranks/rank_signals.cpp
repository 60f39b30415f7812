#include "ranks/rank_signals.hpp"

#include <fmt/format.h>

#include <iterator>

#include "cuda/cuda_status.hpp"
#include "gpupeer/collective_types.hpp"
#include "ranks/signal_kernels.cuh"

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

Status RankSignals::createInMemory(int rank, int device, const std::vector<std::uint32_t*>& words, int flagsPerSender,
                                   const SignalBound& bound) {
  const std::uint32_t one = 1;
  GPUPEER_RETURN_IF_ERROR(one_.allocate(device, sizeof one));
  GPUPEER_CUDA_CHECK(device, cudaMemcpy(one_.get(), &one, sizeof one, cudaMemcpyHostToDevice));
  devices_.assign(words.size(), -1);
  devices_[rank] = device;
  words_ = words;
  flagsPerSender_ = flagsPerSender;
  bound_ = bound;
  return Status::ok();
}

Status RankSignals::post(int from, cudaStream_t stream, int to, int flag) {
  const int d = devices_[from];
  if (words_.empty()) {
    // One event per flag covers every receiver: recording it again at the same point of the
    // stream for the next receiver changes nothing.
    GPUPEER_CUDA_CHECK(d, cudaEventRecord(events_[from][flag].get(), stream));
    return Status::ok();
  }
  GPUPEER_CUDA_CHECK(
      d, cudaMemcpyAsync(word(to, from, flag), one_.get(), sizeof(std::uint32_t), cudaMemcpyDeviceToDevice, stream));
  return Status::ok();
}

Status RankSignals::wait(int at, cudaStream_t stream, int from, int flag) {
  const int d = devices_[at];
  if (!words_.empty())
    return GPUPEER_ERROR(ErrorCode::kInternal, "an unbounded wait between ranks of several processes");
  GPUPEER_CUDA_CHECK(d, cudaStreamWaitEvent(stream, events_[from][flag].get(), 0));
  return Status::ok();
}

Status RankSignals::exchange(int at, cudaStream_t stream, const std::vector<Posted>& posts,
                             const std::vector<Awaited>& waits, const ExpectedCall* call) {
  if (words_.empty()) {
    for (const Posted& p : posts) GPUPEER_RETURN_IF_ERROR(post(at, stream, p.to, p.flag));
    for (const Awaited& w : waits) GPUPEER_RETURN_IF_ERROR(wait(at, stream, w.from, w.flag));
    return Status::ok();
  }
  if (posts.empty() && waits.empty()) return Status::ok();
  AwaitSignalsArgs a;
  if (posts.size() > std::size(a.postWords) || waits.size() > std::size(a.words))
    return GPUPEER_ERROR(ErrorCode::kInternal,
                         fmt::format("{} posts and {} waits in one kernel", posts.size(), waits.size()));
  for (const Posted& p : posts) {
    a.postWords[a.posts] = word(p.to, at, p.flag);
    a.postValues[a.posts++] = p.value;
  }
  for (const Awaited& w : waits) {
    a.words[a.count] = word(at, w.from, w.flag);
    a.senders[a.count++] = w.from;
  }
  if (call && !waits.empty()) {
    a.call[0] = call->word0;
    a.call[1] = call->word1;
    a.word1At = call->word1Flag - waits.front().flag;
  }
  a.error = bound_.error;
  a.timeoutNs = bound_.timeoutNs;
  a.abortWord = bound_.abortWord;
  GPUPEER_CUDA_CHECK(devices_[at], launchAwaitSignals(a, stream));
  return Status::ok();
}

}  // namespace gpupeer
