#include "collectives/ce_chunks.hpp"

#include <algorithm>

#include "collectives/signal_numbers.hpp"

namespace gpupeer {
namespace {

// Bytes rounded up to a multiple of 256.
std::size_t roundChunk(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

CeChunkPlan planCeChunks(std::size_t count, std::size_t es, std::size_t slotBytes) {
  CeChunkPlan plan;
  const std::size_t bytes = count * es;
  // Every chunk costs the host about a dozen API calls: eagerly, fewer chunks keep the GPUs
  // busy; a copy costs ~2 us to start, hence 1 MiB at least.
  const std::size_t parts = bytes >= (64u << 20) ? 8 : 4;
  std::size_t chunkBytes = std::max<std::size_t>(roundChunk(bytes / parts), 1u << 20);
  chunkBytes = std::max<std::size_t>(std::min(chunkBytes, slotBytes / 4), slotBytes / kMaxCePositions);
  chunkBytes = std::max(chunkBytes / es * es, es);
  plan.positionBytes = chunkBytes;
  plan.positions = std::max<std::size_t>(slotBytes / chunkBytes, 1);
  plan.chunkElements = chunkBytes / es;
  plan.chunks = (count + plan.chunkElements - 1) / plan.chunkElements;
  return plan;
}

}  // namespace gpupeer
