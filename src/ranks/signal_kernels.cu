#include "cuda/signal_device.cuh"
#include "ranks/signal_kernels.cuh"

namespace gpupeer {
namespace {

// Waits until *flag is non-zero (a call's word0 has bit 31 set, so no signed comparison); 0
// where the wait gave up.
__device__ std::uint32_t awaitRaised(const AwaitSignalsArgs& a, const std::uint32_t* flag, int sender) {
  std::uint32_t value = 0;
  return awaitValue(
             flag, a, sender, [](std::uint32_t v) { return v != 0; }, value)
             ? value
             : 0;
}

__global__ void awaitSignalsKernel(AwaitSignalsArgs a) {
  // What the stream did before this kernel (reading the scratch, reducing) is complete: the
  // release stores only need to order this thread's own accesses.
  for (int k = 0; k < a.posts; ++k) releaseStore(a.postWords[k], a.postValues[k]);
  for (int k = 0; k < a.count; ++k) {
    volatile std::uint32_t* flag = a.words[k];
    const std::uint32_t word0 = awaitRaised(a, a.words[k], a.senders[k]);
    if (word0 == 0) return;
    if (a.call[0] != 0) {
      volatile std::uint32_t* second = a.words[k] + a.word1At;
      const std::uint32_t word1 = *second;  // written before the flag, by the same stream
      *second = 0;
      if (word0 != a.call[0] || word1 != a.call[1]) {
        recordError(a.error, kMismatchError | static_cast<std::uint32_t>(a.senders[k]), word0, word1, a.call[0],
                    a.call[1]);
        return;
      }
    }
    *flag = 0;  // its sender raises it again only after this rank's later signals
  }
}

}  // namespace

cudaError_t launchAwaitSignals(const AwaitSignalsArgs& a, cudaStream_t stream) {
  awaitSignalsKernel<<<1, 1, 0, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace gpupeer
