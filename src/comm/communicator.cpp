#include "gpupeer/communicator.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "cuda/all_reduce_kernels.cuh"
#include "cuda/cuda_status.hpp"
#include "cuda/device_memory.hpp"
#include "gpupeer/peer_access.hpp"

namespace gpupeer {
namespace {

// cuMemGetAddressRange through the runtime's driver entry points: the size of the allocation
// a device pointer lies in, so a buffer too small for the message is refused before launch.
// Returns false when it cannot tell.
bool allocationEnd(const void* p, const char** end) {
  using Fn = int (*)(unsigned long long*, std::size_t*, unsigned long long);
  static Fn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return static_cast<Fn>(nullptr);
    }
    return reinterpret_cast<Fn>(f);
  }();
  unsigned long long base = 0;
  std::size_t size = 0;
  if (!fn || fn(&base, &size, reinterpret_cast<unsigned long long>(p)) != 0) return false;
  *end = reinterpret_cast<const char*>(base) + size;
  return true;
}

}  // namespace

struct Communicator::Impl {
  std::vector<int> devices;
  std::size_t scratchBytes = 0;
  struct Rank {
    DeviceBuffer scratch, flags, epochs, error;
  };
  std::vector<Rank> ranks;
};

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Communicator::~Communicator() = default;
int Communicator::ranks() const { return static_cast<int>(impl_->devices.size()); }
int Communicator::device(int rank) const { return impl_->devices.at(rank); }

Result<std::unique_ptr<Communicator>> Communicator::create(const std::vector<int>& devices, std::size_t scratchBytes) {
  if (devices.size() < 2 || devices.size() > static_cast<std::size_t>(kMaxCommRanks))
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("a communicator takes 2 to {} GPUs, not {}", kMaxCommRanks, devices.size()));
  if (std::set<int>(devices.begin(), devices.end()).size() != devices.size())
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "a GPU appears twice in the communicator");
  if (scratchBytes < 4096 || scratchBytes % 256)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "scratch must be at least 4 KiB and a multiple of 256 bytes");
  auto impl = std::make_unique<Impl>();
  impl->devices = devices;
  impl->scratchBytes = scratchBytes;
  impl->ranks.resize(devices.size());
  for (int a : devices)
    for (int b : devices)
      if (a != b) GPUPEER_RETURN_IF_ERROR(PeerAccess::process().enable(a, b));
  const std::size_t flagBytes = sizeof(std::uint32_t) * kMaxAllReduceBlocks * kMaxCommRanks;
  for (std::size_t r = 0; r < devices.size(); ++r) {
    Impl::Rank& rank = impl->ranks[r];
    int d = devices[r];
    GPUPEER_RETURN_IF_ERROR(rank.scratch.allocate(d, 2 * scratchBytes));
    GPUPEER_RETURN_IF_ERROR(rank.flags.allocate(d, flagBytes));
    GPUPEER_RETURN_IF_ERROR(rank.epochs.allocate(d, sizeof(std::uint32_t) * kMaxAllReduceBlocks));
    GPUPEER_RETURN_IF_ERROR(rank.error.allocate(d, sizeof(std::uint32_t)));
    GPUPEER_CUDA_CHECK(d, cudaMemset(rank.flags.get(), 0, flagBytes));
    GPUPEER_CUDA_CHECK(d, cudaMemset(rank.epochs.get(), 0, rank.epochs.size()));
    GPUPEER_CUDA_CHECK(d, cudaMemset(rank.error.get(), 0, rank.error.size()));
    GPUPEER_CUDA_CHECK(d, cudaDeviceSynchronize());
  }
  return std::unique_ptr<Communicator>(new Communicator(std::move(impl)));
}

Status Communicator::allReduce(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                               DataType type, RedOp op, const std::vector<cudaStream_t>& streams) {
  const std::size_t n = impl_->devices.size();
  if (send.size() != n || recv.size() != n || streams.size() != n)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("all-reduce needs one send buffer, receive buffer and stream per rank ({}); got "
                                     "{}, {} and {}",
                                     n, send.size(), recv.size(), streams.size()));
  GPUPEER_RETURN_IF_ERROR(checkRedOpForType(op, type));
  if (count == 0) return Status::ok();
  const std::size_t bytes = count * dataTypeSize(type);
  for (std::size_t r = 0; r < n; ++r) {
    if (!send[r] || !recv[r]) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("rank {}: null buffer", r));
    for (const void* p : {send[r], static_cast<const void*>(recv[r])}) {
      cudaPointerAttributes attr{};
      if (cudaPointerGetAttributes(&attr, p) != cudaSuccess || attr.type != cudaMemoryTypeDevice ||
          attr.device != impl_->devices[r]) {
        (void)cudaGetLastError();
        return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                             fmt::format("rank {}: buffer {} is not memory of GPU{}", r, p, impl_->devices[r]));
      }
    }
    // A buffer shorter than the message would be overrun: ask CUDA for the allocation's end.
    for (const void* p : {send[r], static_cast<const void*>(recv[r])}) {
      const char* end = nullptr;
      if (allocationEnd(p, &end) && static_cast<const char*>(p) + bytes > end)
        return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                             fmt::format("rank {}: buffer {} holds {} bytes from there, the message is {}", r, p,
                                         end - static_cast<const char*>(p), bytes));
    }
  }
  int previous = 0;
  cudaGetDevice(&previous);
  const std::size_t elementSize = dataTypeSize(type);
  const std::size_t piece = impl_->scratchBytes / elementSize;
  for (std::size_t done = 0; done < count; done += piece) {
    std::size_t len = std::min(piece, count - done);
    // Enough blocks to fill the GPUs for large pieces, few for small ones (each block runs
    // its own barrier). Same on every rank, as the kernel requires.
    int blocks = static_cast<int>(std::clamp<std::size_t>((len * elementSize) / (16 * 1024), 1, 132));
    for (std::size_t r = 0; r < n; ++r) {
      AllReducePeers peers{};
      for (std::size_t k = 0; k < n; ++k) {
        peers.scratch[k] = impl_->ranks[k].scratch.get();
        peers.flags[k] = reinterpret_cast<std::uint32_t*>(impl_->ranks[k].flags.get());
      }
      peers.epochs = reinterpret_cast<std::uint32_t*>(impl_->ranks[r].epochs.get());
      peers.error = reinterpret_cast<std::uint32_t*>(impl_->ranks[r].error.get());
      peers.scratchElements = piece;
      peers.rank = static_cast<int>(r);
      peers.ranks = static_cast<int>(n);
      int d = impl_->devices[r];
      GPUPEER_CUDA_CHECK(d, cudaSetDevice(d));
      GPUPEER_CUDA_CHECK(d, launchOneShotAllReduce(static_cast<const char*>(send[r]) + done * elementSize,
                                                   static_cast<char*>(recv[r]) + done * elementSize, len, type, op,
                                                   peers, blocks, streams[r]));
    }
  }
  cudaSetDevice(previous);
  return Status::ok();
}

Status Communicator::checkBarriers() {
  for (std::size_t r = 0; r < impl_->ranks.size(); ++r) {
    std::uint32_t error = 0;
    int d = impl_->devices[r];
    GPUPEER_CUDA_CHECK(d, cudaSetDevice(d));
    GPUPEER_CUDA_CHECK(d, cudaMemcpy(&error, impl_->ranks[r].error.get(), sizeof error, cudaMemcpyDeviceToHost));
    if (error) {
      GPUPEER_CUDA_CHECK(d, cudaMemset(impl_->ranks[r].error.get(), 0, sizeof error));
      return GPUPEER_ERROR(ErrorCode::kTimeout,
                           fmt::format("rank {} (GPU{}) waited more than 10 s at a barrier for rank {} (GPU{})", r, d,
                                       error - 1, impl_->devices[error - 1]))
          .withKbId("platform/p2p-advertised-but-broken");
    }
  }
  return Status::ok();
}

}  // namespace gpupeer
