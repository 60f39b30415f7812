#pragma once
// The copy-engine algorithm's chunks, pure (copy_engine_path.cpp copies and reduces them;
// tests/unit/ce_plan_test.cpp checks them): how a reducing collective's message is cut, and
// which scratch position each chunk lands in.

#include <cstddef>
#include <vector>

namespace gpupeer {

struct CeChunk {
  std::size_t first = 0, len = 0;  ///< elements [first, first + len) of each sender's share
  int position = 0;                ///< the scratch position it lands in (chunk index mod positions)
};

struct CePlan {
  std::size_t chunkElements = 0;  ///< a scratch position's size in elements; no chunk is longer
  int positions = 0;              ///< positions per sender's slot
  std::vector<CeChunk> chunks;    ///< in order, covering [0, count) without gaps
};

/// Chunks of `count` elements of `elementSize` bytes, for slots of `slotBytes` per sender.
/// `parts` chunks (0: 8 from 64 MiB, 4 below), each at least 1 MiB (a copy costs ~2 us to
/// start) and a 64th of the slot (the events per position), and at most a quarter slot, so a
/// message up to a slot never waits for a position.
/// `shrinkTail`: the last chunk goes as halves (1/2, 1/4, ... down to 1 MiB), so the reduction
/// left after the last copy is of 1-2 MiB instead of a whole chunk; each halving still copies
/// at least as long as the previous chunk's reduction takes (copy ~390 GB/s, reduction of two
/// sources ~1 TB/s of chunk).
CePlan planCeChunks(std::size_t count, std::size_t elementSize, std::size_t slotBytes, int parts, bool shrinkTail);

}  // namespace gpupeer
