#pragma once
// A rank's error word: what its kernels write when a wait for a peer gives up
// (cuda/signal_device.cuh), a peer's call differs or a peer's buffer is not registered
// (collectives/call_line.cuh) or a send's length differs from its receive's
// (ranks/p2p_kernels.cu), and what the host reads back to report it (RankCommunicator). 0:
// nothing went wrong; 1 + a rank: that rank did not arrive in time; else one of these. The
// first value written stays.

#include <cstdint>

namespace gpupeer {

/// The error word's value after an abort (no rank is that large).
inline constexpr std::uint32_t kAbortedError = 0xffffu;
/// The error word's value, or'ed with the rank, where that rank's call differed from this one's.
inline constexpr std::uint32_t kMismatchError = 0x10000u;
/// Or'ed with the rank whose buffer of a zero-copy call is not (any more) registered here.
inline constexpr std::uint32_t kUnregisteredError = 0x20000u;
/// Or'ed with the rank whose send carries another length than this rank's receive from it
/// (ranks/p2p_kernels.cu); the send's and the receive's byte counts lie beside the error word.
inline constexpr std::uint32_t kLengthMismatchError = 0x40000u;

}  // namespace gpupeer
