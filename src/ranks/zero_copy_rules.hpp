#pragma once
// From which size a collective whose buffers are registered reads and writes the peers'
// buffers directly instead of going through the scratch: pure, so that
// tests/unit/zero_copy_rules_test.cpp can check the measured rule.

#include <cstddef>
#include <optional>

#include "gpupeer/collective_types.hpp"

namespace gpupeer {

/// Bytes per rank (count x element size) from which an all-reduce, all-gather or
/// reduce-scatter of `ranks` ranks on registered buffers takes the pull kernel (split for
/// all-reduce and all-gather, pull for reduce-scatter); none where the scratch path was as
/// fast or faster at every size (and for the other operations). Measured on 2 and 4 H200 in graphs, 256 KiB to 256 MiB,
/// both ways in one run (bench/results/h200x4/2026-11-27-multi-process, p*-graph and
/// p*-graph-registered): 2 ranks, all-reduce from 64 MiB (256 MiB: 797 us against 856, NCCL
/// 896; 32 MiB 108 against 107), all-gather from 32 MiB per rank (64 MiB in all 103 against
/// 106; 256 MiB 379 against 425), reduce-scatter from 64 MiB per rank (128 MiB in all 212
/// against 216, 256 MiB 414 against 432); 4 ranks, all-gather from 4 MiB per rank (16 MiB in
/// all 46 against 49, 256 MiB 582 against 688, NCCL 658), all-reduce and reduce-scatter never
/// (all-reduce 16-256 MiB 1-11% slower, reduce-scatter 7-120%). 3 and 5-8 ranks, unmeasured,
/// follow 4.
std::optional<std::size_t> zeroCopyFromBytesFor(CollOp op, int ranks);

}  // namespace gpupeer
