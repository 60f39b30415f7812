#pragma once
// The measuring half of `gpupeer coll`: per-rank buffers and streams, timing of back-to-back
// operations eagerly or replayed from one CUDA graph spanning every rank, and the check of
// every rank's result against the host reference.

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "gpupeer/collective_types.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer::cli {

struct CollRank {
  int device = 0;
  void* sendBase = nullptr;  // our own allocations (cudaMalloc) ...
  void* recvBase = nullptr;
  bool owned = true;  // ... or NCCL's symmetric windows (not freed here)
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr, fork = nullptr;
};

/// One operation over all ranks, on the given buffers.
using CollLaunch = std::function<Status(const std::vector<const void*>&, const std::vector<void*>&)>;

/// Where rank r's send and receive pointers are for `op` and `count`, out of place or in the
/// in-place arrangement (all-gather: send inside recv at r x count; reduce-scatter: recv
/// inside send at r x count; else the same buffer).
struct CollBuffers {
  std::vector<const void*> send;
  std::vector<void*> recv;
};
CollBuffers collBuffers(const std::vector<CollRank>& ranks, CollOp op, std::size_t count, DataType type, bool inPlace);

/// Allocates `sendBytes` and `recvBytes` and a stream and events on each device.
Result<std::vector<CollRank>> makeRanks(const std::vector<int>& devices, std::size_t sendBytes, std::size_t recvBytes);
void freeRanks(std::vector<CollRank>& ranks);

/// Seconds per operation: `iters` operations back to back (each on the buffers the previous
/// one used: no overlap of independent work), after `warmup`; the slowest rank's clock.
/// graphLaunches > 0: the `iters` operations are captured once into one graph over all ranks'
/// streams and the graph is replayed graphLaunches times.
Result<double> timeCollective(std::vector<CollRank>& ranks, const CollLaunch& launch, const CollBuffers& b, int warmup,
                              int iters, int graphLaunches);

/// Writes each rank's input (knownAnswerInput) where the operation reads it.
Status uploadInputs(std::vector<CollRank>& ranks, const CollBuffers& b,
                    const std::vector<std::vector<std::uint8_t>>& in);
/// #wrong over every rank's result; reductions must also be bitwise identical across ranks.
Result<std::size_t> countWrong(std::vector<CollRank>& ranks, const CollBuffers& b, CollOp op, DataType type,
                               RedOp redop, int root, std::size_t count,
                               const std::vector<std::vector<std::uint8_t>>& inputs);

Status syncRanks(std::vector<CollRank>& ranks);

}  // namespace gpupeer::cli
