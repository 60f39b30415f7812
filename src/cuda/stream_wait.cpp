#include "cuda/stream_wait.hpp"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "cuda/cuda_status.hpp"

namespace gpupeer {

Status waitForStream(cudaStream_t stream, int device, double timeoutSeconds, const char* what) {
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    cudaError_t err = cudaStreamQuery(stream);
    if (err == cudaSuccess) return Status::ok();
    if (err != cudaErrorNotReady) {
      (void)cudaGetLastError();
      return cudaFailure(err, what, device, __FILE__, __LINE__);
    }
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeoutSeconds) {
      Status s =
          GPUPEER_ERROR(ErrorCode::kTimeout, fmt::format("{} did not finish within {:.0f} s: the transfer is stuck "
                                                         "(peer writes that never arrive look like this)",
                                                         what, timeoutSeconds));
      s.withDevice(device, busIdOf(device)).withKbId("platform/p2p-advertised-but-broken");
      return s;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(waited < 0.01 ? 5 : 200));
  }
}

}  // namespace gpupeer
