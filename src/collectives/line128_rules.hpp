#pragma once
// When the one-shot kernel takes its 128-byte lines (one_shot_lines128.cu) and how it walks
// them: pure, so that tests/unit/line128_rules_test.cpp can check the measured rules.

#include <cstddef>

namespace gpupeer {

/// The smallest piece (bytes per chunk) that takes 128-byte lines rather than 16-byte ones on
/// `ranks` GPUs (a piece must also be whole 8-byte words): every piece on 2 GPUs, pieces from
/// 64 KiB from 3, where they measured faster (docs/collectives.md, tuned constants).
std::size_t line128FromBytesFor(int ranks);

/// Each slot of the 128-byte lines (2 parities x ranks slots per GPU): 18 MiB on 2 GPUs, room
/// for pieces of 16 MiB (the one-shot slot); 2 MiB from 3 GPUs, room for pieces up to 1.87 MiB
/// (those of 2 MiB measured slower in lines). (The communicator allocates none at all unless
/// every pair of its GPUs has native atomics, i.e. NVLink: communicator.cpp.)
std::size_t line128SlotBytesFor(int ranks);

/// The 128-byte slots where the ranks are in other processes: 18 MiB on 2 GPUs, as in one
/// process; 8 MiB from 3, where the relay (broadcast and reduce) fills them in pieces of up to
/// 7.5 MiB per part, while the one-shot kernel still takes only pieces up to
/// line128SlotBytesFor's. Relay pieces of 7.5 MiB against 1.87 measured faster from 8 MiB on 4
/// processes (docs/collectives.md, the relay row).
std::size_t line128SlotBytesAcrossProcessesFor(int ranks);

/// The kernel's lag for a piece of `bytes`: in its k-th round of lines a warp sends round k and
/// finishes round k - lag. Finishing soon keeps the polls and loads of long pieces off the end;
/// finishing late lets short pieces' lines land first (docs/collectives.md, tuned constants).
int line128LagFor(std::size_t bytes);

/// The kernel's most blocks on GPUs of `sms` SMs: on 2 GPUs three per SM (512 threads of at
/// most 40 registers each: the kernel compiled for 2 ranks), else one. Three measured faster
/// than two or one (docs/collectives.md, tuned constants).
int line128BlocksFor(int ranks, int sms);

/// Whether the relay kernel (broadcast and reduce in parts, through the scratch) takes its
/// 128-byte variant for a message of `bytes` on `ranks` GPUs (the lines' scratch permitting):
/// up to 64 MiB, where it measured faster than the regular variant on 3 and 4 GPUs (the relay's
/// rows end there; docs/collectives.md, the relay row).
bool relayTakesLines128(int ranks, std::size_t bytes);

}  // namespace gpupeer
