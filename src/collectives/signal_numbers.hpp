#pragma once
// The signals between ranks' streams of the copy-engine algorithm and the ring (RankSignals):
// arrival at the operation, end of a sender's copies, and per pipeline position "chunk landed"
// (sender to receiver) and "position reduced, free again" (receiver to sender). Pure.

#include "gpupeer/collective_types.hpp"

namespace gpupeer {

/// The copy-engine algorithm cuts a slot into at most this many chunk positions; the ring uses
/// as many positions (reduce legs) or chunks per link and operation (copy legs).
inline constexpr int kMaxCePositions = 64;

inline constexpr int kArrive = 0, kDone = 1, kLanded = 2;
inline constexpr int freedFlag(int position) { return kLanded + kMaxCePositions + position; }
/// Across processes a rank's arrival carries its call (ranks/call_signature.hpp): word0 as the
/// kArrive flag, word1 as this one.
inline constexpr int kArriveCall = kLanded + 2 * kMaxCePositions;
/// Signals per sender that RankSignals must hold.
inline constexpr int kSignalsPerSender = kArriveCall + 1;

/// Where ranks live in several processes these signals are words in each receiver's flag
/// memory, [sender][signal], after the one-shot kernels' (RankSignals::createInMemory).
inline constexpr int kRankSignalWords = kMaxCommRanks * kSignalsPerSender;

}  // namespace gpupeer
