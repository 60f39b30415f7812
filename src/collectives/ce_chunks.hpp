#pragma once
// How the copy-engine reduction (copy_engine_path.cpp) cuts a message into chunks: each is
// copied into the receiver's scratch and reduced there while the next ones are on the wire.
// Pure, so that tests/unit/ce_chunks_test.cpp can check it.

#include <cstddef>

namespace gpupeer {

struct CeChunkPlan {
  /// Chunk j holds elements [j x chunkElements, (j + 1) x chunkElements), the last one fewer.
  std::size_t chunkElements = 0;
  std::size_t chunks = 0;
  /// A scratch slot holds `positions` chunk positions of positionBytes (a whole chunk); chunk j
  /// goes to position j mod positions.
  std::size_t positionBytes = 0;
  std::size_t positions = 0;
};

/// Chunks for `count` elements of `elementBytes` through slots of `slotBytes`: eight chunks from
/// 64 MiB, four below, at least 1 MiB each, at most a quarter slot and at least 1/64 of one
/// (kMaxCePositions, signal_numbers.hpp). Every chunk but the last is a multiple of 256 bytes
/// and of the element. More, shorter chunks measured slower: every copy and signal costs more
/// than the shorter last reduction saves (docs/collectives.md, tuned constants).
CeChunkPlan planCeChunks(std::size_t count, std::size_t elementBytes, std::size_t slotBytes);

}  // namespace gpupeer
