#pragma once
// When the one-shot kernel takes its 128-byte lines (one_shot_lines128.cu) and how it walks
// them: pure, so that tests/unit/line128_rules_test.cpp can check the measured rules.

#include <cstddef>

namespace gpupeer {

/// The smallest piece (bytes per chunk) that takes 128-byte lines rather than 16-byte ones on
/// `ranks` GPUs (a piece must also be whole 8-byte words). 2 GPUs: every piece. On 2x H200 in
/// graphs (176d235:bench/results/2026-11-22-h200x2-s12, run 6, the kernel compiled for 2 ranks),
/// all-reduce of 8 B-1 KiB took 2.43-2.48 us in 128-byte lines against 2.79-2.89 in 16-byte ones,
/// 4 / 8 KiB 2.85-2.87 / 2.87-2.89 against 2.89-2.93 / 2.88-2.90, 32 KiB 2.88-2.93 against
/// 3.33-3.34 (run 5), 1 MiB 6.1 against 8.9 (runs 3 and 6). From 3 GPUs: pieces from 64 KiB.
/// On 4x H200 in graphs (176d235:bench/results/2026-11-22-h200x4-s13, run 2, the kernel compiled for
/// any rank count), every operation in 128-byte lines against the table's one-shot kernel:
/// pieces of 128 KiB took all-reduce 5.57 against 7.05 us, reduce 4.50 / 5.11, broadcast 3.39 /
/// 4.25, reduce-scatter 5.63 / 7.23, all-gather 5.17 / 6.60; pieces of 512 KiB reduce 5.82 /
/// 9.34, reduce-scatter 9.09 / 13.80, all-gather 8.71 / 13.49, send/recv 4.74 / 6.18; but pieces
/// of 8 and 32 KiB were as often slower as faster (reduce of 8 / 32 KiB 4.26 / 4.33 against
/// 3.79 / 3.80, all-gather of 32 KiB pieces 4.36 / 4.32), and reduce-scatter pieces of 2 MiB
/// 28.96 against 27.87.
std::size_t line128FromBytesFor(int ranks);

/// Each slot of the 128-byte lines (2 parities x ranks slots per GPU): 18 MiB on 2 GPUs, room
/// for pieces of 16 MiB (the one-shot slot); 2 MiB from 3 GPUs, room for pieces up to 1.87 MiB
/// (those of 2 MiB measured slower in lines, above). (The communicator allocates none at all
/// unless every pair of its GPUs has native atomics, i.e. NVLink: communicator.cpp.)
std::size_t line128SlotBytesFor(int ranks);

/// The kernel's lag for a piece of `bytes`: in its k-th round of lines a warp sends round k and
/// finishes round k - lag. Finishing soon keeps the polls and loads of long pieces off the end;
/// finishing late lets short pieces' lines land first. All-reduce in graphs on 2x H200 (run 3):
/// 1 MiB 7.06 us at lag 2, 7.49 at 1, 7.95 at 0; 4 MiB 18.55 at 2, 18.03-18.07 at 1; 8 MiB
/// 32.8 at 2, 31.9 at 1, 31.5 at 0; 16 MiB 61.7 / 60.2 / 58.4.
int line128LagFor(std::size_t bytes);

/// The kernel's most blocks on GPUs of `sms` SMs: on 2 GPUs three per SM (512 threads of at
/// most 40 registers each: the kernel compiled for 2 ranks), else one. Run 5, all-reduce in
/// graphs: 2 MiB 8.87-8.90 us in 396 blocks against 9.34-9.35 in 264 and 9.78-9.80 in 132;
/// 8 MiB 28.20-28.22 / 28.68-28.74 / 29.94-30.01; 16 MiB 53.7 / 54.8 / 57.4.
int line128BlocksFor(int ranks, int sms);

}  // namespace gpupeer
