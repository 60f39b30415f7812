#include "nccl_api/nccl_exchange.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "cuda/cuda_status.hpp"
#include "cuda/device_guard.hpp"
#include "cuda/device_memory.hpp"
#include "nccl_api/real_nccl.hpp"

namespace gpupeer::nccl_api {
namespace {

// One in-place all-gather of `each` bytes per rank through the real NCCL, waited for.
Status allGatherInPlace(CommState& s, const DeviceBuffer& buffer, std::size_t each) {
  const RealNccl& real = realNccl();
  ncclResult_t r =
      real.ncclAllGather(buffer.bytes() + s.rank * each, buffer.get(), each, ncclUint8, s.real, s.exchangeStream);
  if (r != ncclSuccess)
    return GPUPEER_ERROR(ErrorCode::kNccl,
                         fmt::format("start-up exchange: ncclAllGather: {}", real.ncclGetErrorString(r)));
  GPUPEER_CUDA_CHECK(s.device, cudaStreamSynchronize(s.exchangeStream));
  return Status::ok();
}

// `bytes` of host memory through a device buffer and an all-gather of `each` bytes per rank,
// back into `bytes`.
Status gatherBytes(CommState& s, void* bytes, std::size_t size, std::size_t each) {
  DeviceBuffer buffer;
  GPUPEER_RETURN_IF_ERROR(buffer.allocate(s.device, size));
  GPUPEER_CUDA_CHECK(s.device, cudaMemcpy(buffer.get(), bytes, size, cudaMemcpyHostToDevice));
  GPUPEER_RETURN_IF_ERROR(allGatherInPlace(s, buffer, each));
  GPUPEER_CUDA_CHECK(s.device, cudaMemcpy(bytes, buffer.get(), size, cudaMemcpyDeviceToHost));
  return Status::ok();
}

}  // namespace

Result<std::vector<std::optional<std::string>>> gatherOverNccl(CommState& s, const std::string& mine, bool failed) {
  DeviceGuard guard;
  GPUPEER_CUDA_CHECK(s.device, cudaSetDevice(s.device));
  if (s.exchangeStream == nullptr)
    GPUPEER_CUDA_CHECK(s.device, cudaStreamCreateWithFlags(&s.exchangeStream, cudaStreamNonBlocking));
  const std::size_t n = static_cast<std::size_t>(s.ranks);
  std::vector<std::int64_t> sizes(n, 0);
  sizes[s.rank] = failed ? -1 : static_cast<std::int64_t>(mine.size());
  GPUPEER_RETURN_IF_ERROR(gatherBytes(s, sizes.data(), n * sizeof(std::int64_t), sizeof(std::int64_t)));

  std::int64_t longest = 1;
  for (std::int64_t size : sizes) longest = std::max(longest, size);
  const std::size_t each = static_cast<std::size_t>(longest);
  std::string all(n * each, '\0');
  if (!failed) std::copy(mine.begin(), mine.end(), all.begin() + s.rank * each);
  GPUPEER_RETURN_IF_ERROR(gatherBytes(s, all.data(), all.size(), each));

  std::vector<std::optional<std::string>> parts(n);
  for (std::size_t r = 0; r < n; ++r)
    if (sizes[r] >= 0) parts[r] = all.substr(r * each, static_cast<std::size_t>(sizes[r]));
  return parts;
}

}  // namespace gpupeer::nccl_api
