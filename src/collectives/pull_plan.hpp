#pragma once
// What each rank's pull kernel reads and writes, pure (one_shot_path.cpp turns it into
// pointers; tests/unit/pull_plan_test.cpp runs it on host memory). A rank's kernel takes one
// part: `len` elements, reduced in rank order over its sources (copied where there is one
// source), the result written to every target. Offsets are elements into a rank's send buffer
// (sources) or receive buffer (targets).
//
// * Pull (CollAlgo::kPull): every rank builds its own output from every rank's input. All-reduce
//   and reduce bring the whole message into the rank that reduces it.
// * Split (CollAlgo::kSplit): the message is split into parts, one per owner. An owner reads
//   its part from every rank that holds it and writes the result to every rank that needs it,
//   so each GPU's port carries each byte about once in and once out:
//   * all-reduce: n owners, every input to every output (reduce-scatter + all-gather in one
//     pass);
//   * reduce-scatter: rank r owns chunk r (the same as pull);
//   * all-gather: rank r copies its input into every output;
//   * broadcast and reduce: the n-1 ranks other than the root own the parts (with the root
//     as an owner it would bring in its part and then take the others' too); a broadcast's
//     root copies its input into its own output.
//   In place, a unit is read and then written by the same owner only, so no owner overwrites
//   what another still has to read. A copy whose target is its own source (in place: the
//   broadcast root's, an all-gather owner's own chunk) is left out by the caller, which knows
//   the pointers.

#include <array>
#include <cstddef>
#include <vector>

#include "gpupeer/collective_types.hpp"

namespace gpupeer {

struct PullRef {
  int rank = 0;
  std::size_t offset = 0;  ///< elements into that rank's send (source) or receive (target) buffer
};

struct PullPart {
  std::size_t len = 0;  ///< elements; 0: the rank only meets its peers
  int sourceCount = 0, targetCount = 0;
  std::array<PullRef, kMaxCommRanks> sources{}, targets{};
};

/// Every rank's part of `op` (pull: all-reduce, reduce-scatter, reduce; split: those and
/// all-gather and broadcast) on `ranks` ranks for `count` elements of `elementBytes` each.
/// Split parts start at multiples of 16 bytes where the message allows, so that 16-byte
/// aligned buffers stay aligned in every part.
std::vector<PullPart> planPull(CollOp op, int ranks, int root, std::size_t count, std::size_t elementBytes, bool split);

/// The longest part's elements: the pull kernel's grid and tiles are sized for it.
std::size_t longestPart(const std::vector<PullPart>& parts);

/// The pull kernel's grid for parts of at most `partBytes`: a block per `bytesPerBlock`, at
/// least 1 and at most `mostBlocks` (the caller gives one per SM, within the kernel's limit:
/// 512 threads with up to 120 registers each fill an SM).
int pullBlocksFor(std::size_t partBytes, int mostBlocks, std::size_t bytesPerBlock);

/// The pull kernel's share per block by default (a block per that much of the longest part,
/// up to one per SM): 16 KiB for all-reduce (32 KiB for parts of 2 MiB or more on 2 GPUs), 64 KiB
/// for the others. From 3 GPUs, reduce and broadcast (whose owners all store into, or read
/// from, the root) take few blocks where the parts are long: reduce 16 KiB under 1 MiB, 128 KiB
/// under 2 MiB, then 256 KiB; broadcast (whose longest part is the root's copy of the whole
/// message) 16 KiB under 1 MiB, 128 KiB under 2 MiB, 256 KiB under 8 MiB, 16 blocks to 32 MiB,
/// then 2 MiB. Each measured fastest (docs/collectives.md, tuned constants).
std::size_t pullBlockBytesFor(CollOp op, int ranks, std::size_t partBytes);

/// The tiles in which the pull kernel deals a part to its blocks in turn, for a part of
/// `partBytes` over `blocks` blocks: 64 KiB where each block would own 512 KiB or more (the
/// whole grid then works within a window of the buffers), else 0, one range per block. Tiles
/// measured faster from ~1 MiB per block and slower below 250 KiB (docs/collectives.md, tuned
/// constants).
std::size_t pullTileBytesFor(std::size_t partBytes, int blocks);

}  // namespace gpupeer
