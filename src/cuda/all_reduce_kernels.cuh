#pragma once
// One-shot all-reduce: every GPU copies its input into its own scratch buffer, waits at a
// barrier of flags in peer memory, then reads every peer's scratch and reduces locally.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpupeer/collective_types.hpp"

namespace gpupeer {

inline constexpr int kMaxCommRanks = 8;
inline constexpr int kMaxAllReduceBlocks = 256;

/// What one rank's kernel needs to reach the others. Pointers are valid on the rank's device
/// (peer access enabled). flags[r] points at rank r's flag array of
/// kMaxAllReduceBlocks x kMaxCommRanks words: slot [block][sender].
struct AllReducePeers {
  void* scratch[kMaxCommRanks];
  std::uint32_t* flags[kMaxCommRanks];
  std::uint32_t* epochs;        ///< this rank's per-block operation counters (device memory)
  std::uint32_t* error;         ///< this rank's error word: 1 + the rank that did not arrive
  std::size_t scratchElements;  ///< elements per scratch half (two halves alternate)
  int rank;
  int ranks;
};

/// Launches rank `peers.rank`'s part of a one-shot all-reduce of `count` elements on the
/// current device. Every rank must launch with the same count, type, op and `blocks`.
cudaError_t launchOneShotAllReduce(const void* in, void* out, std::size_t count, DataType type, RedOp op,
                                   const AllReducePeers& peers, int blocks, cudaStream_t stream);

}  // namespace gpupeer
