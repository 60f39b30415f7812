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
/// up to one per SM): 16 KiB for all-reduce, 64 KiB for the others but reduce and broadcast
/// from 3 GPUs (below). Measured against each other (176d235:bench/results/2026-11-22-h200x4-s7):
/// split all-reduce of 2 MiB on 2 GPUs 14.4 against 17.4 us eager and 13.5 against 16.9 in
/// graphs, on 4 GPUs 21.1 against 27.0, the same from 8 MiB; but reduce of 8 MiB on 4 GPUs
/// 57.2 against 50.1 us (every owner storing into the root from three times the blocks),
/// broadcast of 2 MiB 16.7 against 16.0.
/// On 2 GPUs, all-reduce parts of 2 MiB or more (messages from 4 MiB) take 32 KiB per block:
/// in graphs on 2x H200, 4 MiB 19.02 us against 19.46-19.53 and 8 MiB 31.78-31.83 against
/// 32.35-32.39 (128 blocks of 32 KiB instead of 132 uneven ones), while 2 MiB was slower in
/// 32 KiB blocks, 13.54-13.58 against 12.94-13.00 (176d235:bench/results/2026-11-22-h200x2-s10/7-shapes;
/// 3+ GPUs not measured, so unchanged).
/// From 3 GPUs, reduce and broadcast (whose owners all store into, or read from, the root) take
/// few blocks where the parts are long; 16 KiB per block for parts under 1 MiB. On 4x H200 in
/// graphs (176d235:bench/results/2026-11-22-h200x4-s11, runs 2 and 3):
/// * reduce: 128 KiB per block under 2 MiB and 256 KiB from there. 8 / 16 / 32 MiB took 38.9 /
///   69.4 / 129.6 us in 256 KiB blocks against 45.9 / 82.9 / 155.3 in 64 KiB ones (512 KiB and
///   1 MiB blocks within 2% at 32 and 64 MiB, slower below); 4 MiB 25.4 in 128 KiB blocks
///   against 26.5; 2 MiB 17.7 in 16 KiB blocks against 18.1.
/// * broadcast, whose longest part is the root's copy into its own output, the whole message:
///   16 KiB per block under 1 MiB, 128 KiB under 2 MiB, 256 KiB under 8 MiB (in these, run 3
///   took 1 / 2 / 4 MiB in 12.64 / 17.16 / 22.77 us), then 16 blocks to 32 MiB (512 KiB for
///   8 MiB 37.78 us, 1 MiB for 16 MiB 66.31) and 2 MiB per block from 32 MiB (32 / 64 / 128 MiB
///   119.31 / 226.13 / 433.39 us against 144.30 / 268.83 / 443.88 in run 3's 256 KiB blocks;
///   NCCL in graphs 116.0 / 210.0 / 395.3). Earlier thresholds, written as if the parts
///   were a third of the message on 4 GPUs, which put 8 MiB in four blocks of 2 MiB (72.49 us)
///   and 2 MiB in four of 512 KiB (25.03; 176d235:bench/results/2026-11-22-h200x4-s13, run 2).
std::size_t pullBlockBytesFor(CollOp op, int ranks, std::size_t partBytes);

/// The tiles in which the pull kernel deals a part to its blocks in turn, for a part of
/// `partBytes` over `blocks` blocks: 64 KiB where each block would own 512 KiB or more (the
/// whole grid then works within a window of the buffers), else 0, one range per block.
/// Measured (176d235:bench/results/2026-11-22-h200x4-s7 and -h200x2-s7), tiles against one range:
/// * from ~1 MiB per block, faster: 2-GPU reduce by pull of 128 / 256 / 512 MiB 371.8 / 730.7 /
///   1447.7 against 381.9 / 752.5 / 1494.1 us, split all-reduce of 512 MiB on 2 GPUs 1575
///   against 1666, reduce-scatter of 512 MiB on 4 GPUs 1317 against 1363;
/// * at 250-500 KiB per block the same (split all-reduce of 128 MiB on 2 GPUs, reduce-scatter by
///   pull of 256 MiB), and slower below, where tiles do not divide evenly among few blocks
///   (broadcast of 2 MiB on 4 GPUs 19.7 against 15.8 us, reduce of 8 MiB 53.5 against 50.1).
std::size_t pullTileBytesFor(std::size_t partBytes, int blocks);

}  // namespace gpupeer
