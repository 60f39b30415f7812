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
/// faster at every size (and for alltoall and send/recv). Measured on 2 and 4 H200 in graphs,
/// both ways in one run against NCCL 2.28.3:
/// * all-reduce, all-gather, reduce-scatter, 256 KiB to 256 MiB
///   (bench/results/h200x4/2026-11-27-multi-process, p*-graph and p*-graph-registered):
///   2 ranks, all-reduce from 64 MiB (256 MiB: 797 us against 856, NCCL 896; 32 MiB 108 against
///   107), all-gather from 32 MiB per rank (64 MiB in all 103 against 106; 256 MiB 379 against
///   425), reduce-scatter from 64 MiB per rank (128 MiB in all 212 against 216, 256 MiB 414
///   against 432); 4 ranks, all-gather from 4 MiB per rank (16 MiB in all 46 against 49,
///   256 MiB 582 against 688, NCCL 658), all-reduce and reduce-scatter never (all-reduce
///   16-256 MiB 1-11% slower, reduce-scatter 7-120%).
/// * broadcast and reduce, 256 KiB to 256 MiB (bench/results/h200x4/2026-11-27-registration):
///   4 ranks, broadcast from 2 MiB below 128 MiB (4 MiB 25 us against the chain's 53, NCCL 25;
///   64 MiB 222 against 267; 128 MiB 460 against 467 and 256 MiB 961 against 866), reduce from
///   2 MiB below 64 MiB (16 MiB 71 against 148, NCCL 61; 64 MiB 304 against 286). Below 2 MiB
///   the scratch path's one-shot kernel is faster (bench/results/h200x4/2026-11-27-chain-grid:
///   1 MiB broadcast 11.0 us, reduce 9.1, against split's 15.4 and 14.8 registered); 2 ranks
///   never (one-shot through the scratch as fast or faster at 256 KiB-16 MiB and above 64 MiB).
/// 3 and 5-8 ranks, unmeasured, follow 4.
std::optional<ZeroCopySizes> zeroCopySizesFor(CollOp op, int ranks);

}  // namespace gpupeer
