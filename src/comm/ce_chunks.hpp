#pragma once
// How the copy-engine reduction (copy_engine_path.cpp) cuts a message into chunks: each is
// copied into the receiver's scratch and reduced there while the next ones are on the wire.
// Pure, so that tests/unit/ce_chunks_test.cpp can check it.

#include <cstddef>
#include <vector>

namespace gpupeer {

struct CeChunk {
  std::size_t first = 0;  ///< first element
  std::size_t len = 0;    ///< elements
};

struct CeChunkPlan {
  std::vector<CeChunk> chunks;  ///< in order, covering [0, count) exactly
  /// A scratch slot holds `positions` chunk positions of positionBytes (the largest chunk);
  /// chunk j goes to position j mod positions.
  std::size_t positionBytes = 0;
  std::size_t positions = 0;
};

/// Chunks for `count` elements of `elementBytes` through slots of `slotBytes`: eight chunks from
/// 64 MiB, four below, at least 1 MiB each, at most a quarter slot and at least 1/64 of one
/// (kMaxCePositions, signal_numbers.hpp). Every chunk but the last is a multiple of 256 bytes
/// and of the element. More, shorter chunks measured slower on 2x H200: every copy and signal
/// costs more than the shorter last reduction saves (bench/results/2026-11-22-h200x2-s8/5-ce,
/// and a tail that halved down to 1-4 MiB in 2026-11-22-h200x2-s9/1-ce).
CeChunkPlan planCeChunks(std::size_t count, std::size_t elementBytes, std::size_t slotBytes);

}  // namespace gpupeer
