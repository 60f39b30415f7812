#pragma once
// At which sizes a collective whose buffers are registered reads and writes the peers' buffers
// directly instead of going through the scratch: pure, so that
// tests/unit/zero_copy_rules_test.cpp can check the measured rule.

#include <cstddef>
#include <limits>
#include <optional>

#include "gpupeer/collective_types.hpp"

namespace gpupeer {

/// Bytes per rank (count x element size) from `from` up to, not including, `below`.
struct ZeroCopySizes {
  std::size_t from = 0;
  std::size_t below = std::numeric_limits<std::size_t>::max();
  bool holds(std::size_t rankBytes) const { return rankBytes >= from && rankBytes < below; }
};

/// The sizes at which an operation of `ranks` ranks on registered buffers takes the pull kernel
/// (pull for reduce-scatter, split for the others); none where the scratch path was as fast or
/// faster at every size (and for alltoall and send/recv). Measured on 2-4 H200 in graphs,
/// both ways in one run against NCCL 2.28.3:
/// * all-reduce, all-gather, reduce-scatter, 256 KiB to 256 MiB
///   (bench/results/h200x4/2026-11-27-multi-process, p*-graph and p*-graph-registered; 2 ranks
///   again in bench/results/h200x2/2026-11-28-pieces-in-one-kernel, p2-*-registered):
///   2 ranks, all-gather from 32 MiB per rank (64 MiB in all 101.6 us against 105.3, 256 MiB
///   377.5 against 391.3), all-reduce and reduce-scatter never since the scratch path carries a
///   message's pieces in one kernel (all-reduce of 64 / 256 MiB 205.3 / 795.7 against 201.2 /
///   769.4, reduce-scatter of 128 / 256 MiB 211.6 / 414.4 against 202.7 / 393.5);
///   4 ranks, all-gather from 4 MiB per rank (16 MiB in all 46 against 49,
///   256 MiB 582 against 688, NCCL 658), all-reduce and reduce-scatter never (all-reduce
///   16-256 MiB 1-11% slower, reduce-scatter 7-120%).
/// * broadcast and reduce, 1 to 256 MiB, against the scratch path's relay in 128-byte lines and
///   its chain (bench/results/h200x4/2026-11-28-zero-copy-rules): broadcast from 32 MiB below
///   128 MiB (3 ranks 32 / 64 MiB 104.9 / 195.7 us against the relay's 113.9 / 225.6, NCCL
///   111.0 / 205.5; 4 ranks 118.4 / 224.4 against 119.3 / 226.9; below, the relay: 2 MiB 15.6
///   against split's 19.8 on 4 ranks; 128 MiB split 429.5 / 462.0 against the chain's 432.4 /
///   466.6 on 3 / 4 ranks, 256 MiB 863.8 / 963.4 against 821.0 / 863.2), reduce never (the relay
///   as fast or faster at 2-32 MiB: 4 ranks 2 MiB 18.0 against 24.1, 32 MiB 132.2 against 132.5;
///   3 ranks 32 MiB 119.7 against 123.1; split 64-256 MiB 1.16-1.35x the relay's or chain's
///   time). 2 ranks never (one-shot through the scratch as fast or faster at 256 KiB-16 MiB and
///   above 64 MiB; bench/results/h200x4/2026-11-27-registration).
/// 5-8 ranks, unmeasured, follow 4; all-reduce, all-gather and reduce-scatter on 3 follow 4.
std::optional<ZeroCopySizes> zeroCopySizesFor(CollOp op, int ranks);

}  // namespace gpupeer
