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

/// The pull kernel's share per block by default: a block per 16 KiB of the longest part (up to
/// one per SM). On 2x H200, split all-reduces in CUDA graphs took 10.7 / 13.5 / 19.9 us at
/// 1 / 2 / 4 MiB with 16 KiB against 14.8 / 16.9 / 21.3 with 64 KiB, the same from 8 MiB
/// (bench/results/2026-11-22-h200x2-s7/2-pull-grid).
inline constexpr std::size_t kPullBlockBytes = 16u << 10;

/// The tiles in which the pull kernel deals a part to its blocks in turn, for a part of
/// `partBytes` over `blocks` blocks: 64 KiB where each block would own 1 MiB or more (the
/// whole grid then works within a window of the buffers: split all-reduce of 512 MiB on 2x H200
/// 1575 against 1666 us, reduce-scatter of 512 MiB on 4x H200 1317 against 1363), else 0, one
/// range per block (equal at 128 MiB, and tiles that do not divide evenly among few blocks
/// left some blocks two: broadcast of 2 MiB on 4 GPUs 19.7 against 15.8 us).
std::size_t pullTileBytesFor(std::size_t partBytes, int blocks);

}  // namespace gpupeer
