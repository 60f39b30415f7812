#include "nccl_api/nccl_exchange.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "nccl_api/real_nccl.hpp"

namespace gpupeer::nccl_api {
namespace {

// The calling thread's device, put back on every return.
class DeviceRestorer {
 public:
  DeviceRestorer() { cudaGetDevice(&device_); }
  ~DeviceRestorer() {
    if (device_ >= 0) cudaSetDevice(device_);
  }

 private:
  int device_ = -1;
};

Status cudaStep(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  return GPUPEER_ERROR(ErrorCode::kCuda, fmt::format("start-up exchange: {}: {}", what, cudaGetErrorString(e)));
}

// One in-place all-gather of `each` bytes per rank through the real NCCL, waited for.
Status allGatherInPlace(CommState& s, void* device, std::size_t each) {
  const RealNccl& real = realNccl();
  char* base = static_cast<char*>(device);
  ncclResult_t r = real.ncclAllGather(base + s.rank * each, base, each, ncclUint8, s.real, s.exchangeStream);
  if (r != ncclSuccess)
    return GPUPEER_ERROR(ErrorCode::kNccl,
                         fmt::format("start-up exchange: ncclAllGather: {}", real.ncclGetErrorString(r)));
  return cudaStep(cudaStreamSynchronize(s.exchangeStream), "waiting for the all-gather");
}

}  // namespace

Result<std::vector<std::optional<std::string>>> gatherOverNccl(CommState& s, const std::string& mine, bool failed) {
  DeviceRestorer restore;
  GPUPEER_RETURN_IF_ERROR(cudaStep(cudaSetDevice(s.device), "cudaSetDevice"));
  if (s.exchangeStream == nullptr)
    GPUPEER_RETURN_IF_ERROR(
        cudaStep(cudaStreamCreateWithFlags(&s.exchangeStream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"));
  const std::size_t n = static_cast<std::size_t>(s.ranks);
  std::vector<std::int64_t> sizes(n, 0);
  sizes[s.rank] = failed ? -1 : static_cast<std::int64_t>(mine.size());
  void* device = nullptr;
  GPUPEER_RETURN_IF_ERROR(cudaStep(cudaMalloc(&device, n * sizeof(std::int64_t)), "cudaMalloc"));
  Status st = cudaStep(cudaMemcpy(device, sizes.data(), n * sizeof(std::int64_t), cudaMemcpyHostToDevice), "copy");
  if (st.isOk()) st = allGatherInPlace(s, device, sizeof(std::int64_t));
  if (st.isOk())
    st = cudaStep(cudaMemcpy(sizes.data(), device, n * sizeof(std::int64_t), cudaMemcpyDeviceToHost), "copy back");
  cudaFree(device);
  GPUPEER_RETURN_IF_ERROR(st);

  std::int64_t longest = 1;
  for (std::int64_t size : sizes) longest = std::max(longest, size);
  const std::size_t each = static_cast<std::size_t>(longest);
  std::string all(n * each, '\0');
  if (!failed) std::copy(mine.begin(), mine.end(), all.begin() + s.rank * each);
  GPUPEER_RETURN_IF_ERROR(cudaStep(cudaMalloc(&device, all.size()), "cudaMalloc"));
  st = cudaStep(cudaMemcpy(device, all.data(), all.size(), cudaMemcpyHostToDevice), "copy");
  if (st.isOk()) st = allGatherInPlace(s, device, each);
  if (st.isOk()) st = cudaStep(cudaMemcpy(all.data(), device, all.size(), cudaMemcpyDeviceToHost), "copy back");
  cudaFree(device);
  GPUPEER_RETURN_IF_ERROR(st);

  std::vector<std::optional<std::string>> parts(n);
  for (std::size_t r = 0; r < n; ++r)
    if (sizes[r] >= 0) parts[r] = all.substr(r * each, static_cast<std::size_t>(sizes[r]));
  return parts;
}

}  // namespace gpupeer::nccl_api
