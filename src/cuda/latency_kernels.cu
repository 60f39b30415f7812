#include "cuda/latency_kernels.cuh"
#include "cuda/signal_device.cuh"

namespace gpupeer {
namespace {

__global__ void pointerChaseKernel(const std::uint64_t* start, int hops, std::uint64_t* sink) {
  // ld.volatile keeps each load from being cached in L1, so every hop crosses the link.
  const std::uint64_t* p = start;
  for (int i = 0; i < hops; ++i)
    p = reinterpret_cast<const std::uint64_t*>(*reinterpret_cast<const volatile std::uint64_t*>(p));
  *sink = reinterpret_cast<std::uint64_t>(p);
}

// Its own poll loop rather than awaitAtLeast: the loop is part of the round trip that the
// ping-pong times, and it reads the clock on every poll and has no abort word to look at.
__device__ bool waitFor(volatile std::uint32_t* flag, std::uint32_t value, unsigned long long timeoutNs) {
  unsigned long long start = globalTimerNs();
  while (acquireLoad(flag) < value)
    if (globalTimerNs() - start > timeoutNs) return false;
  return true;
}

__global__ void pingPongKernel(volatile std::uint32_t* localFlag, volatile std::uint32_t* peerFlag, int rounds,
                               bool initiator, unsigned long long timeoutNs, std::uint32_t* stalledAt) {
  *stalledAt = 0;
  for (std::uint32_t i = 1; i <= static_cast<std::uint32_t>(rounds); ++i) {
    if (initiator) {
      releaseStore(peerFlag, i);
      if (!waitFor(localFlag, i, timeoutNs)) {
        *stalledAt = i;
        return;
      }
    } else {
      if (!waitFor(localFlag, i, timeoutNs)) {
        *stalledAt = i;
        return;
      }
      releaseStore(peerFlag, i);
    }
  }
}

}  // namespace

cudaError_t launchPointerChase(const std::uint64_t* start, int hops, std::uint64_t* sink, cudaStream_t stream) {
  pointerChaseKernel<<<1, 1, 0, stream>>>(start, hops, sink);
  return cudaGetLastError();
}

cudaError_t launchPingPong(volatile std::uint32_t* localFlag, volatile std::uint32_t* peerFlag, int rounds,
                           bool initiator, unsigned long long timeoutNs, std::uint32_t* stalledAt,
                           cudaStream_t stream) {
  pingPongKernel<<<1, 1, 0, stream>>>(localFlag, peerFlag, rounds, initiator, timeoutNs, stalledAt);
  return cudaGetLastError();
}

}  // namespace gpupeer
