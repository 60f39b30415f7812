#include "cuda/latency_kernels.cuh"

namespace gpupeer {
namespace {

__global__ void pointerChaseKernel(const std::uint64_t* start, int hops, std::uint64_t* sink) {
  // ld.volatile keeps each load from being cached in L1, so every hop crosses the link.
  const std::uint64_t* p = start;
  for (int i = 0; i < hops; ++i)
    p = reinterpret_cast<const std::uint64_t*>(*reinterpret_cast<const volatile std::uint64_t*>(p));
  *sink = reinterpret_cast<std::uint64_t>(p);
}

__device__ unsigned long long globalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ void storeRelease(volatile std::uint32_t* p, std::uint32_t v) {
  // Release at system scope: the peer that acquires the flag also sees every earlier write.
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ std::uint32_t loadAcquire(volatile std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ bool waitFor(volatile std::uint32_t* flag, std::uint32_t value, unsigned long long timeoutNs) {
  unsigned long long start = globalTimer();
  while (loadAcquire(flag) < value)
    if (globalTimer() - start > timeoutNs) return false;
  return true;
}

__global__ void pingPongKernel(volatile std::uint32_t* localFlag, volatile std::uint32_t* peerFlag, int rounds,
                               bool initiator, unsigned long long timeoutNs, std::uint32_t* stalledAt) {
  *stalledAt = 0;
  for (std::uint32_t i = 1; i <= static_cast<std::uint32_t>(rounds); ++i) {
    if (initiator) {
      storeRelease(peerFlag, i);
      if (!waitFor(localFlag, i, timeoutNs)) {
        *stalledAt = i;
        return;
      }
    } else {
      if (!waitFor(localFlag, i, timeoutNs)) {
        *stalledAt = i;
        return;
      }
      storeRelease(peerFlag, i);
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
